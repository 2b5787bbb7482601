package webhooks

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
)

// maxScanPerPass bounds the due keys one pass examines, so a long run of
// deliveries to saturated targets cannot stall the loop; the next pass
// resumes where this one stopped.
const maxScanPerPass = 4096

// maxParked bounds the deliveries held in memory waiting for a saturated
// target; beyond it they stay due in the schedule (read again later).
const maxParked = 8192

// parkedItem is a due delivery waiting for a free slot of its target.
type parkedItem struct {
	d   *delivery
	key []byte
}

// scheduler is the dispatcher's in-memory state. The schedule itself is the
// Badger index wh/due/<time><id>; the scheduler only remembers where to
// start reading it (cursor) so that passes seek past processed keys and the
// tombstones acknowledgements leave behind, and which deliveries are in
// flight.
type scheduler struct {
	scanMu sync.Mutex // one pass at a time

	mu         sync.Mutex
	cursor     []byte // first key not yet dispatched in the last complete sweep
	resume     []byte // where an interrupted sweep continues (nil: start at cursor)
	sweepLow   []byte // first key skipped during the current sweep
	pendingLow []byte // lowest due key written since the last pass began
	inflight   map[string]bool
	doneDuring map[string]bool // acknowledged while a pass was reading an older snapshot
	scanning   bool
	targets    map[string]int
	parked     map[string][]parkedItem // per target, FIFO
	parkedN    int
	active     int
	pending    int // dispatched, not yet acknowledged
	idle       *sync.Cond
	wake       chan struct{}
}

func (sc *scheduler) init() {
	sc.cursor = []byte(duePrefix) // a new process reads the whole schedule once
	sc.inflight = map[string]bool{}
	sc.doneDuring = map[string]bool{}
	sc.targets = map[string]int{}
	sc.parked = map[string][]parkedItem{}
	sc.idle = sync.NewCond(&sc.mu)
	sc.wake = make(chan struct{}, 1)
}

func (sc *scheduler) poke() {
	select {
	case sc.wake <- struct{}{}:
	default:
	}
}

// noteDue records that key was written to the schedule, so the next pass
// starts no later than it, and wakes the loop.
func (sc *scheduler) noteDue(key []byte) {
	sc.mu.Lock()
	if sc.pendingLow == nil || bytes.Compare(key, sc.pendingLow) < 0 {
		sc.pendingLow = key
	}
	sc.mu.Unlock()
	sc.poke()
}

func minKey(a, b []byte) []byte {
	if a == nil {
		return b
	}
	if b == nil || bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

// passResult tells the loop what to do next.
type passResult struct {
	dispatched int
	more       bool      // stopped early with due keys left: run again soon
	nextDue    time.Time // earliest future due time seen (zero: none)
}

// pass reads the schedule from the cursor up to now and dispatches every due
// delivery it can: not in flight, a free worker, its target under the
// per-target cap. A delivery whose target is saturated is skipped and stays
// due; the others proceed (no head-of-line blocking).
func (s *Service) pass(now time.Time) (passResult, error) {
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
	sc.mu.Unlock()
	defer func() {
		sc.mu.Lock()
		sc.scanning = false
		clear(sc.doneDuring)
		sc.mu.Unlock()
	}()
	if start == nil {
		start = []byte(duePrefix)
	}

	var res passResult
	cfg := s.cur() // this pass's limits (Reconfigure may change them)
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(duePrefix), PrefetchValues: false})
	defer it.Close()

	var (
		examined int
		last     []byte
		stopAt   []byte // resume point when stopping early
		future   []byte // first key due after now
		corrupt  [][]byte
	)
	for it.Seek(start); it.Valid(); it.Next() {
		k := it.Item().KeyCopy(nil)
		due, id, ok := parseTimeKey(duePrefix, k)
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
		full := sc.active >= cfg.opts.Workers
		sc.mu.Unlock()
		if busy {
			continue
		}
		if full {
			stopAt = k // resumed when a worker frees up (it pokes the loop)
			break
		}
		d, err := itemDelivery(it.Item())
		if err != nil {
			corrupt = append(corrupt, k)
			continue
		}
		tgt := target(d.URL)
		sc.mu.Lock()
		if sc.targets[tgt] >= cfg.opts.PerTargetConcurrency {
			// Saturated target: park it in memory (bounded) for the next
			// free slot of that target, or leave it due for a later sweep.
			if sc.parkedN < maxParked {
				sc.parked[tgt] = append(sc.parked[tgt], parkedItem{d: d, key: k})
				sc.parkedN++
				sc.inflight[id] = true
				sc.pending++
			} else {
				sc.sweepLow = minKey(sc.sweepLow, k)
			}
			sc.mu.Unlock()
			continue
		}
		sc.inflight[id] = true
		sc.targets[tgt]++
		sc.active++
		sc.pending++
		sc.mu.Unlock()
		s.workers.Add(1)
		go s.run(d, k, tgt)
		res.dispatched++
	}

	sc.mu.Lock()
	if stopAt != nil {
		sc.resume = stopAt
	} else {
		// The sweep is complete: the next one starts at the first skipped
		// key, or the first future key, or just past the last key seen.
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
	sc.mu.Unlock()
	if len(corrupt) > 0 {
		s.quarantine(corrupt)
	}
	return res, nil
}

// itemDelivery decodes the delivery record held by a schedule item.
func itemDelivery(item *badger.Item) (*delivery, error) {
	var d *delivery
	err := item.Value(func(v []byte) error {
		var e error
		d, e = unmarshalDelivery(v)
		return e
	})
	return d, err
}

// quarantineBatch is how many entries one quarantine transaction moves
// (two writes each, well inside Badger's transaction limit).
const quarantineBatch = 500

// quarantine moves schedule entries whose record does not decode to
// wh/corrupt/..., so they neither block the queue nor vanish unnoticed.
func (s *Service) quarantine(keys [][]byte) {
	for len(keys) > 0 {
		part := keys[:min(len(keys), quarantineBatch)]
		keys = keys[len(part):]
		err := s.db.Update(func(txn *badger.Txn) error {
			for _, k := range part {
				item, err := txn.Get(k)
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if err := errors.Join(txn.Set(append([]byte(corruptPrefix), k[len(duePrefix):]...), v), txn.Delete(k)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.logger().Error("webhooks: quarantining undecodable deliveries", zap.Error(err))
			return
		}
		s.queued.Add(-int64(len(part)))
		s.logger().Error("webhooks: undecodable deliveries moved to "+corruptPrefix, zap.Int("count", len(part)))
	}
}

// loop is the dispatcher started by Start: a pass whenever something is
// published or acknowledged, a worker frees up, or the earliest due time
// arrives.
func (s *Service) loop() {
	defer s.loops.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for s.ctx.Err() == nil {
		res, err := s.pass(s.clock())
		if err != nil {
			s.logger().Error("webhooks: reading the schedule", zap.Error(err))
			res.nextDue = s.clock().Add(time.Second)
		}
		if res.more {
			continue
		}
		wait := time.Minute // re-check at least this often (wall-clock jumps)
		if !res.nextDue.IsZero() {
			wait = min(wait, max(res.nextDue.Sub(s.clock()), time.Millisecond))
		}
		timer.Reset(wait)
		select {
		case <-s.ctx.Done():
			return
		case <-s.sched.wake:
		case <-timer.C:
		}
	}
}

// RunDue dispatches everything due at the injected clock's now and waits
// until those attempts are acknowledged, repeating while passes make
// progress (so deliveries held back by the per-target cap go too). Tests
// drive the dispatcher with it instead of Start; it returns the number of
// attempts made.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	total := 0
	for {
		if s.closed.Load() {
			return total, errClosed
		}
		res, err := s.pass(s.clock())
		if err != nil {
			return total, err
		}
		total += res.dispatched
		if err := s.waitIdle(ctx); err != nil {
			return total, err
		}
		if res.dispatched == 0 && !res.more {
			return total, nil
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
