package webhooks

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// maxScanPerPass bounds the due keys one pass examines, so a long run of
// deliveries that cannot be taken now cannot stall the loop; the next pass
// resumes where this one stopped.
const maxScanPerPass = 4096

// passResult tells the loop what to do next.
type passResult struct {
	dispatched int
	more       bool      // stopped early with due keys left: run again soon
	nextDue    time.Time // earliest future due time seen (zero: none)
}

// pass reads the schedule from the cursor up to now into the partners'
// ready queues (bounded), reads again the keys skipped earlier for partners
// whose queue has drained, and starts every ready delivery it can (see
// scheduler). A delivery that cannot start now stays ready; the others
// proceed (no head-of-line blocking).
func (s *Service) pass(now time.Time) (passResult, error) {
	if s.claimer != nil {
		return s.claimPass(now)
	}
	sc := &s.sched
	sc.scanMu.Lock()
	defer sc.scanMu.Unlock()

	sc.mu.Lock()
	sc.scanning = true
	start := sc.resume
	if start == nil {
		start = minKey(sc.cursor, sc.pendingLow)
	} else {
		sc.sweepLow = minKey(sc.sweepLow, sc.pendingLow)
	}
	sc.pendingLow = nil
	refill := sc.wantsRefill()
	sc.mu.Unlock()
	defer func() {
		sc.mu.Lock()
		sc.scanning = false
		clear(sc.doneDuring)
		sc.mu.Unlock()
	}()
	if start == nil {
		start = []byte{}
	}

	var res passResult
	cfg := s.cur() // this pass's limits (Reconfigure may change them)
	it, err := s.store.ReadSchedule()
	if err != nil {
		return res, err
	}
	defer it.Close()
	er := newEntryReader(it)
	var corrupt [][]byte
	for p, from := range refill {
		if s.refill(er, p, from, now, &corrupt) {
			res.more = true
		}
	}

	var (
		examined int
		last     []byte
		stopAt   []byte // resume point when stopping early
		future   []byte // first key due after now
	)
	for it.Seek(start); it.Valid(); it.Next() {
		k := it.Pos()
		due, id, ok := ParseSchedulePos(k)
		if !ok {
			continue
		}
		if due.After(now) {
			future, res.nextDue = k, due
			break
		}
		if examined >= maxScanPerPass {
			stopAt, res.more = k, true
			break
		}
		examined++
		last = k
		sc.mu.Lock()
		busy := sc.inflight[id] || sc.doneDuring[id]
		full := sc.readyN >= maxReady
		sc.mu.Unlock()
		if busy {
			continue
		}
		if full {
			stopAt = k // resumed when deliveries start (a freed slot pokes the loop)
			break
		}
		d, err := er.delivery()
		if err != nil {
			corrupt = append(corrupt, k)
			continue
		}
		sc.mu.Lock()
		sc.enqueue(d, k) // a full partner queue remembers k (held)
		sc.mu.Unlock()
	}

	sc.mu.Lock()
	if stopAt != nil {
		sc.resume = stopAt
	} else {
		// The sweep is complete: the next one starts at the lowest key
		// written during it, or the first future key, or just past the last
		// key seen. (Keys skipped for a full partner queue are in held.)
		next := sc.sweepLow
		if next == nil {
			next = future
		}
		if next == nil && last != nil {
			next = append(last, 0)
		}
		if next == nil {
			next = start
		}
		sc.cursor, sc.resume, sc.sweepLow = next, nil, nil
	}
	res.dispatched = s.dispatch(cfg)
	sc.mu.Unlock()
	if len(corrupt) > 0 {
		s.quarantine(corrupt)
	}
	return res, nil
}

// refill reads partner's due deliveries again from from (the lowest key
// skipped while its queue was full) into its queue, until the queue is full
// again (the next key of the partner is held again), the keys due now run
// out, or the scan bound is reached (then it reports true: run again). Keys
// of other partners are passed over: they are in flight or ready, held for
// their own partner, or beyond the sweep's cursor.
func (s *Service) refill(er *entryReader, partner string, from []byte, now time.Time, corrupt *[][]byte) (more bool) {
	sc := &s.sched
	it := er.it
	examined := 0
	hold := func(k []byte) {
		sc.mu.Lock()
		sc.held[partner] = minKey(sc.held[partner], k)
		sc.mu.Unlock()
	}
	for it.Seek(from); it.Valid(); it.Next() {
		k := it.Pos()
		due, id, ok := ParseSchedulePos(k)
		if !ok {
			continue
		}
		if due.After(now) {
			return false
		}
		if examined >= maxScanPerPass {
			hold(k)
			return true
		}
		examined++
		sc.mu.Lock()
		busy := sc.inflight[id] || sc.doneDuring[id]
		full := sc.readyN >= maxReady
		sc.mu.Unlock()
		if busy {
			continue
		}
		if full {
			hold(k)
			return false
		}
		mine, err := er.maybeOf(partner)
		if err != nil || !mine {
			continue
		}
		d, err := er.delivery()
		if err != nil {
			*corrupt = append(*corrupt, k)
			continue
		}
		if d.PartnerID != partner {
			continue
		}
		sc.mu.Lock()
		added := sc.enqueue(d, k) // full again: k is held
		sc.mu.Unlock()
		if !added {
			return false
		}
	}
	return false
}

// entryReader decodes the records of a schedule reader's entries. Its
// callbacks are method values made once per reader, so reading a record
// allocates nothing but the delivery.
type entryReader struct {
	it      ScheduleReader
	d       *delivery
	partner string // ofPartner's question
	mine    bool   // ofPartner's answer
	decodeV func([]byte) error
	ofPartV func([]byte) error
}

func newEntryReader(it ScheduleReader) *entryReader {
	r := &entryReader{it: it}
	r.decodeV, r.ofPartV = r.decode, r.ofPartner
	return r
}

func (r *entryReader) decode(v []byte) error {
	var err error
	r.d, err = unmarshalDelivery(v)
	return err
}

func (r *entryReader) ofPartner(v []byte) error {
	p, ok := recordPartner(v)
	r.mine = !ok || p == r.partner // undecidable: decode it to tell
	return nil
}

// delivery decodes the current entry's record.
func (r *entryReader) delivery() (*delivery, error) {
	r.d = nil
	err := r.it.Value(r.decodeV)
	return r.d, err
}

// maybeOf reports whether the current entry may be partner's (a record
// that does not tell without decoding may be).
func (r *entryReader) maybeOf(partner string) (bool, error) {
	r.partner = partner
	err := r.it.Value(r.ofPartV)
	return r.mine, err
}

// quarantine moves schedule entries whose record does not decode out of
// the schedule (the store keeps them aside), so they neither block the
// queue nor vanish unnoticed.
func (s *Service) quarantine(positions [][]byte) {
	n, err := s.store.Quarantine(positions)
	if n > 0 {
		s.queued.Add(-int64(n))
		s.logger().Error("webhooks: undecodable deliveries set aside", zap.Int("count", n))
	}
	if err != nil {
		s.logger().Error("webhooks: quarantining undecodable deliveries", zap.Error(err))
	}
}

// loop is the dispatcher started by Start: a pass whenever something is
// published or acknowledged, a worker frees up, or the earliest due time
// arrives.
func (s *Service) loop() {
	defer s.loops.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	poll := time.Minute // re-check at least this often (wall-clock jumps)
	if s.claimer != nil {
		poll = claimPoll
	}
	shared := s.wake
	for s.ctx.Err() == nil {
		res, err := s.pass(s.clock())
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.logger().Error("webhooks: reading the schedule", zap.Error(err))
			res.nextDue = s.clock().Add(time.Second)
		}
		if res.more {
			continue
		}
		wait := poll
		if !res.nextDue.IsZero() {
			wait = min(wait, max(res.nextDue.Sub(s.clock()), time.Millisecond))
		}
		timer.Reset(wait)
		select {
		case <-s.ctx.Done():
			return
		case <-s.sched.wake:
		case _, ok := <-shared:
			if !ok {
				shared = nil
			}
		case <-timer.C:
		}
	}
}

// RunDue dispatches everything due at the injected clock's now and waits
// until those attempts are acknowledged, repeating while passes make
// progress (so deliveries held back by the caps go too). Tests
// drive the dispatcher with it instead of Start; it returns the number of
// attempts made.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	s.sched.mu.Lock()
	before := s.sched.started
	s.sched.mu.Unlock()
	total := func() int {
		s.sched.mu.Lock()
		defer s.sched.mu.Unlock()
		return int(s.sched.started - before)
	}
	for {
		if s.closed.Load() {
			return total(), errClosed
		}
		res, err := s.pass(s.clock())
		if err != nil {
			return total(), err
		}
		if err := s.waitIdle(ctx); err != nil {
			return total(), err
		}
		if res.dispatched == 0 && !res.more {
			return total(), nil
		}
	}
}

// waitIdle waits until every dispatched delivery is acknowledged and every
// attempt slot is free again. (An attempt frees its slot just after
// handing over its outcome, so a pass right after the last
// acknowledgement could still find every slot busy, dispatch nothing and
// end RunDue with deliveries still due.)
func (s *Service) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.sched.mu.Lock()
		s.sched.idle.Broadcast()
		s.sched.mu.Unlock()
	})
	defer stop()
	s.sched.mu.Lock()
	defer s.sched.mu.Unlock()
	for s.sched.pending > 0 || s.sched.active > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.sched.idle.Wait()
	}
	return nil
}
