package webhooks

import (
	"bytes"
	"sync"
)

// maxReady bounds the due deliveries held in memory waiting for an attempt
// slot (all partners together); beyond it a sweep stops and resumes when
// slots free up.
const maxReady = 8192

// maxReadyPerPartner bounds one partner's share of them; a partner's due
// deliveries beyond it stay due in the schedule (the lowest skipped key is
// remembered) and are read again once its queue has drained to half. So a
// partner with a huge backlog cannot fill memory with its deliveries and
// keep other partners' out.
const maxReadyPerPartner = 256

// readyItem is a due delivery read from the schedule, waiting for a slot.
type readyItem struct {
	d   *delivery
	key []byte // its schedule key
	tgt string // target(d.URL)
}

// partnerQueue holds one partner's ready deliveries by target; targets
// take turns, and within a target the oldest goes first.
type partnerQueue struct {
	byTarget map[string][]readyItem
	order    []string // targets with items, in turn order
	next     int      // position in order of the target served next
	n        int
}

func (q *partnerQueue) push(it readyItem) {
	if q.byTarget == nil {
		q.byTarget = map[string][]readyItem{}
	}
	if len(q.byTarget[it.tgt]) == 0 {
		q.order = append(q.order, it.tgt)
	}
	q.byTarget[it.tgt] = append(q.byTarget[it.tgt], it)
	q.n++
}

// take removes and returns the oldest item of the first target, in turn
// order, that free accepts.
func (q *partnerQueue) take(free func(tgt string) bool) (readyItem, bool) {
	for i := range q.order {
		pos := (q.next + i) % len(q.order)
		tgt := q.order[pos]
		if !free(tgt) {
			continue
		}
		l := q.byTarget[tgt]
		it := l[0]
		l[0] = readyItem{}
		if len(l) == 1 {
			delete(q.byTarget, tgt)
			q.order = append(q.order[:pos], q.order[pos+1:]...)
			q.next = pos
		} else {
			q.byTarget[tgt] = l[1:]
			q.next = pos + 1
		}
		if len(q.order) > 0 {
			q.next %= len(q.order)
		} else {
			q.next = 0
		}
		q.n--
		return it, true
	}
	return readyItem{}, false
}

// scheduler is the dispatcher's in-memory state. The schedule itself is the
// store's (QueueStorage, ordered by SchedulePos; "keys" below are
// positions); the scheduler remembers where to start reading it (cursor) so
// that passes seek past processed keys (and, in Badger, the tombstones
// acknowledgements leave behind), which deliveries are in flight,
// and the due deliveries read but not yet started (ready, per partner).
//
// Fairness: a partner has at most PerPartnerConcurrency attempts in flight
// (so its dead receivers hold at most that many workers), a target at most
// PerTargetConcurrency, and a free worker goes to the partners with ready
// deliveries in turn (round robin), whatever order their deliveries are due
// in.
type scheduler struct {
	scanMu sync.Mutex // one pass at a time

	mu         sync.Mutex
	cursor     []byte // first key not yet dispatched in the last complete sweep
	resume     []byte // where an interrupted sweep continues (nil: start at cursor)
	sweepLow   []byte // lowest key written during an interrupted sweep
	pendingLow []byte // lowest due key written since the last pass began
	inflight   map[string]bool
	doneDuring map[string]bool // acknowledged while a pass was reading an older snapshot
	scanning   bool
	targets    map[string]int           // attempts in flight per target
	partners   map[string]int           // attempts in flight per partner
	ready      map[string]*partnerQueue // per partner
	ring       []string                 // partners with ready deliveries, in turn order
	next       int                      // position in ring of the partner served next
	readyN     int
	held       map[string][]byte // per partner: lowest due key skipped because its queue was full
	active     int
	pending    int   // dispatched or ready, not yet acknowledged
	started    int64 // attempts started since New
	idle       *sync.Cond
	wake       chan struct{}
	// claimed holds, for a shared queue (Claimer), the position of each
	// delivery this instance has claimed and not settled (ready, in
	// flight, or waiting for its outcome to be written), by id: their
	// leases are renewed, and released when the service closes.
	claimed map[string][]byte
}

func (sc *scheduler) init(claiming bool) {
	if claiming {
		sc.claimed = map[string][]byte{}
	}
	sc.cursor = []byte{} // the lowest position: a new process reads the whole schedule once
	sc.inflight = map[string]bool{}
	sc.doneDuring = map[string]bool{}
	sc.targets = map[string]int{}
	sc.partners = map[string]int{}
	sc.ready = map[string]*partnerQueue{}
	sc.held = map[string][]byte{}
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

// enqueue adds a due delivery read at key to its partner's ready queue; if
// that queue is full it remembers key as skipped and reports false. The
// caller holds sc.mu.
func (sc *scheduler) enqueue(d *delivery, key []byte) bool {
	p := d.PartnerID
	q := sc.ready[p]
	if q != nil && q.n >= maxReadyPerPartner {
		sc.held[p] = minKey(sc.held[p], key)
		return false
	}
	if q == nil {
		q = &partnerQueue{}
		sc.ready[p] = q
		sc.ring = append(sc.ring, p)
	}
	q.push(readyItem{d: d, key: key, tgt: target(d.URL)})
	sc.inflight[d.ID] = true
	sc.pending++
	sc.readyN++
	return true
}

// wantsRefill lists the partners whose skipped keys should be read again:
// their queue has drained to half or less. The caller holds sc.mu.
func (sc *scheduler) wantsRefill() map[string][]byte {
	var out map[string][]byte
	for p, k := range sc.held {
		if q := sc.ready[p]; q == nil || q.n <= maxReadyPerPartner/2 {
			if out == nil {
				out = map[string][]byte{}
			}
			out[p] = k
			delete(sc.held, p)
		}
	}
	return out
}

// pick takes the next ready delivery to start: from the next partner in
// turn that is under its cap and has a delivery for a target under its
// cap. The caller holds sc.mu.
func (sc *scheduler) pick(perPartner, perTarget int) (readyItem, bool) {
	free := func(tgt string) bool { return sc.targets[tgt] < perTarget }
	for i := range sc.ring {
		pos := (sc.next + i) % len(sc.ring)
		p := sc.ring[pos]
		if sc.partners[p] >= perPartner {
			continue
		}
		q := sc.ready[p]
		it, ok := q.take(free)
		if !ok {
			continue
		}
		sc.readyN--
		if q.n == 0 {
			delete(sc.ready, p)
			sc.ring = append(sc.ring[:pos], sc.ring[pos+1:]...)
			sc.next = pos
		} else {
			sc.next = pos + 1
		}
		if len(sc.ring) > 0 {
			sc.next %= len(sc.ring)
		} else {
			sc.next = 0
		}
		return it, true
	}
	return readyItem{}, false
}

// dispatch starts ready deliveries while workers are free, partners in
// turn; it returns how many it started. The caller holds sc.mu.
func (s *Service) dispatch(cfg *settings) int {
	sc := &s.sched
	n := 0
	for sc.active < cfg.opts.Workers && s.ctx.Err() == nil {
		it, ok := sc.pick(cfg.opts.PerPartnerConcurrency, cfg.opts.PerTargetConcurrency)
		if !ok {
			break
		}
		sc.active++
		sc.targets[it.tgt]++
		sc.partners[it.d.PartnerID]++
		sc.started++
		n++
		s.workers.Add(1)
		go s.run(it.d, it.key, it.tgt)
	}
	return n
}
