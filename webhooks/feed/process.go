package feed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Result tells what processing a batch of changes did.
type Result struct {
	Read       int       `json:"read"`       // changes in the batch
	Duplicates int       `json:"duplicates"` // already done before (skipped)
	Rejected   int       `json:"rejected"`   // skipped as unusable
	Events     int       `json:"events"`     // events produced
	Deliveries int       `json:"deliveries"` // deliveries queued (events × matching subscriptions)
	NewestAt   time.Time `json:"-"`          // the newest "at" among the changes
	// RejectedChanges are the changes of this batch that were rejected.
	RejectedChanges []Rejected `json:"rejected_changes,omitempty"`
}

// maxLoggedPerBatch bounds the log lines of rejected changes per batch.
const maxLoggedPerBatch = 20

// maxQuietPerCommit bounds the seen markers of changes without events
// committed in one transaction.
const maxQuietPerCommit = 1000

// chunkChanges bounds the changes of one Publish call (one transaction).
const chunkChanges = 64

// publishParallel bounds concurrent Publish calls of one batch; concurrent
// commits may share an fsync (Badger's do).
const publishParallel = 4

type chunk struct {
	partner string
	events  []webhooks.Event
	keys    []string // keys[i] names events[i] (KeyedPublisher)
	ids     []string
}

// Process turns changes into events and queues them durably, skipping the
// changes already done. For a polled page, cursor is the page's next cursor:
// it is stored in the last transaction, after every event of the page is
// queued, so a crash at any point leaves a cursor from which reading again
// produces each event exactly once (done changes are skipped by id). For
// pushed changes cursor is nil. source ("poll" or "push") is recorded with
// rejected changes.
func (f *Feed) Process(changes []Change, cursor *string, source string) (Result, error) {
	return f.process(changes, cursor, source, -1, 0)
}

// errReset: the feed was reset while a page was being read; the page is
// dropped and reading starts again from the reset cursor.
var errReset = errors.New("the feed was reset while this page was read")

// process is Process for a polled page read after cursor generation gen
// (-1: pushed changes), whose writes are fenced by lease token fence (0:
// not fenced).
func (f *Feed) process(changes []Change, cursor *string, source string, gen int, fence uint64) (Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen >= 0 {
		f.smu.Lock()
		stale := gen != f.poll.gen
		f.smu.Unlock()
		if stale {
			return Result{}, errReset
		}
	}
	s := f.settings.Load()
	res := Result{Read: len(changes)}

	ids := make([]string, 0, len(changes))
	for _, c := range changes {
		if c.ID != "" && len(c.ID) <= maxIDLen {
			ids = append(ids, c.ID)
		}
	}
	done, err := f.st.Seen(ids)
	if err != nil {
		return res, fmt.Errorf("reading done changes: %w", err)
	}

	now := f.clock()
	var (
		chunks    []*chunk
		byPartner = map[string]*chunk{}
		quiet     []string // done without events (no event for this kind, rejected)
		rejected  []Rejected
	)
	for _, c := range changes {
		if c.ID != "" && done[c.ID] {
			res.Duplicates++
			continue
		}
		if c.At.After(res.NewestAt) {
			res.NewestAt = c.At
		}
		reason := s.Mapping.Check(c)
		var events []webhooks.Event
		if reason == "" {
			consolidation, ok, err := s.Partners(c.Partner)
			if err != nil {
				return res, fmt.Errorf("looking up partner %q: %w", c.Partner, err)
			}
			if !ok {
				reason = fmt.Sprintf("unknown partner %q", c.Partner)
			} else {
				events, reason = s.Mapping.Map(c, consolidation)
			}
		}
		if c.ID != "" && len(c.ID) <= maxIDLen {
			done[c.ID] = true // a repeat inside the batch is a duplicate too
		}
		if reason != "" {
			rejected = append(rejected, f.rejectedEntry(c, reason, source, now))
			if c.ID != "" && len(c.ID) <= maxIDLen {
				quiet = append(quiet, c.ID)
			}
			continue
		}
		if len(events) == 0 {
			quiet = append(quiet, c.ID)
			continue
		}
		res.Events += len(events)
		ch := byPartner[c.Partner]
		if ch == nil || len(ch.ids) >= chunkChanges {
			ch = &chunk{partner: c.Partner}
			byPartner[c.Partner] = ch
			chunks = append(chunks, ch)
		}
		ch.events = append(ch.events, events...)
		key := f.eventKey(c)
		for _, e := range events {
			ch.keys = append(ch.keys, key+"\x00"+e.Name+"\x00"+e.Identifier)
		}
		ch.ids = append(ch.ids, c.ID)
	}
	res.Rejected = len(rejected)

	expires := time.Now().Add(f.window) // seen markers expire by wall clock
	f.smu.Lock()
	total := f.rejTot
	f.smu.Unlock()
	for i := range rejected {
		total++
		rejected[i].Seq = total
	}
	// final holds the writes that make the batch complete: the cursor, the
	// changes that produced no event, the rejected list.
	final := PageWrites{Seen: quiet, SeenUntil: expires, Rejected: rejected, RejectedTotal: total, Cursor: cursor, Fence: fence}

	if ss, ok := s.Publisher.(SubscriptionSyncer); ok && len(chunks) > 0 {
		if err := ss.SyncSubscriptions(); err != nil {
			return res, fmt.Errorf("bringing the subscriptions up to date: %w", err)
		}
	}
	if len(chunks) == 1 && len(quiet) <= maxQuietPerCommit {
		// The common small page: one transaction for everything.
		n, err := f.publish(s.Publisher, chunks[0], expires, fence, &final)
		if err != nil {
			return res, err
		}
		res.Deliveries = n
	} else {
		n, err := f.publishAll(s.Publisher, chunks, expires, fence)
		res.Deliveries = n
		if err != nil {
			return res, err
		}
		for len(final.Seen) > maxQuietPerCommit { // keep the last transaction small
			part := PageWrites{Seen: final.Seen[:maxQuietPerCommit], SeenUntil: expires, Fence: fence}
			if err := f.st.Commit(f.st.PageWrites(part)); err != nil {
				return res, err
			}
			final.Seen = final.Seen[maxQuietPerCommit:]
		}
		if err := f.st.Commit(f.st.PageWrites(final)); err != nil {
			return res, fmt.Errorf("storing cursor: %w", err)
		}
	}

	res.RejectedChanges = rejected
	f.committed(res, rejected, total)
	if cursor != nil {
		f.smu.Lock()
		f.poll.cursor = *cursor
		f.smu.Unlock()
	}
	return res, nil
}

// publishAll publishes the chunks, a few partners at a time (a partner's
// chunks in order), and returns the number of deliveries queued. Each chunk
// marks its changes done in its own transaction, so after an error the
// chunks that succeeded are not redone.
func (f *Feed) publishAll(p Publisher, chunks []*chunk, expires time.Time, fence uint64) (int, error) {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		total  int
		errs   []error
		sem    = make(chan struct{}, publishParallel)
		groups = map[string][]*chunk{}
		order  []string
	)
	for _, ch := range chunks {
		if _, ok := groups[ch.partner]; !ok {
			order = append(order, ch.partner)
		}
		groups[ch.partner] = append(groups[ch.partner], ch)
	}
	for _, partner := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(list []*chunk) {
			defer func() { <-sem; wg.Done() }()
			for _, ch := range list {
				n, err := f.publish(p, ch, expires, fence, nil)
				mu.Lock()
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(groups[partner])
	}
	wg.Wait()
	return total, errors.Join(errs...)
}

// publish queues one chunk's events and marks its changes seen (with the
// writes of more, if not nil) in the same transaction, fenced by fence. A
// transaction conflict is retried.
func (f *Feed) publish(p Publisher, ch *chunk, expires time.Time, fence uint64, more *PageWrites) (int, error) {
	w := PageWrites{Seen: ch.ids, SeenUntil: expires, Fence: fence}
	if more != nil {
		w = *more
		w.Seen = append(slices.Clip(ch.ids), more.Seen...)
	}
	with := f.st.PageWrites(w)
	for attempt := 0; ; attempt++ {
		var n int
		var err error
		if kp, ok := p.(KeyedPublisher); ok {
			n, err = kp.PublishKeyed(ch.partner, ch.events, ch.keys, with)
		} else {
			n, err = p.Publish(ch.partner, ch.events, with)
		}
		if errors.Is(err, webhooks.ErrConflict) && attempt < 5 {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("queueing events of partner %q: %w", ch.partner, err)
		}
		return n, nil
	}
}

func (f *Feed) rejectedEntry(c Change, reason, source string, now time.Time) Rejected {
	raw := string(c.Raw)
	if len(raw) > 512 {
		raw = raw[:512]
	}
	return Rejected{
		ChangeID: c.ID, Partner: c.Partner, Kind: c.Kind, Change: c.Change,
		Reason: reason, Source: source, RejectedAt: now, Raw: raw,
	}
}

// committed updates counters and the in-memory rejected list after a
// successful commit, and logs each rejected change once.
func (f *Feed) committed(res Result, rejected []Rejected, total uint64) {
	f.counters.read.Add(uint64(res.Read))
	f.counters.duplicates.Add(uint64(res.Duplicates))
	f.counters.rejected.Add(uint64(res.Rejected))
	f.counters.events.Add(uint64(res.Events))
	f.counters.deliveries.Add(uint64(res.Deliveries))
	if len(rejected) == 0 {
		return
	}
	f.smu.Lock()
	f.rejTot = total
	f.rej = append(f.rej, rejected...)
	if len(f.rej) > MaxRejected {
		f.rej = append([]Rejected(nil), f.rej[len(f.rej)-MaxRejected:]...)
	}
	f.smu.Unlock()
	for i, r := range rejected {
		if i == maxLoggedPerBatch {
			f.logger.Warn("more rejected upstream changes in this batch; see the feed's rejected list",
				zap.String("feed", f.name), zap.Int("not_logged", len(rejected)-i))
			break
		}
		f.logger.Warn("rejected upstream change",
			zap.String("feed", f.name), zap.String("change_id", r.ChangeID),
			zap.String("partner", r.Partner), zap.String("kind", r.Kind),
			zap.String("change", r.Change), zap.String("reason", r.Reason),
			zap.String("source", r.Source))
	}
}

// eventKey names a change's occurrence for webhooks.Event.Key: the feed,
// the change id and the change's content, so that reading the same change
// again (after a reset that forgot the done ids) gives its events the
// x-hook-ids they had, while a WMS that reuses an id for another change
// (another entity, status or time) gives new ones.
func (f *Feed) eventKey(c Change) string {
	return strings.Join(append([]string{f.name, c.ID, c.Partner, c.Kind, c.Entity, c.Change, c.Status, c.Shipment,
		c.At.UTC().Format(time.RFC3339Nano)}, c.Products...), "\x00")
}
