package webhooks

import (
	"bytes"
	"time"

	"go.uber.org/zap"
)

// maxAckBatch bounds the acknowledgements committed in one transaction.
const maxAckBatch = 512

// ackResult is the outcome of one dispatched delivery, to be written.
type ackResult struct {
	d       *delivery // updated record (attempts, log, Due)
	oldKey  []byte    // its schedule position when it was dispatched
	outcome Outcome
	// retention of a dead delivery, from the settings the attempt started
	// with
	retention time.Duration
	// keep: how many delivered deliveries the delivery log keeps per
	// subscription (none if 0), from the settings the attempt started with
	keep int
}

// settlement is r as the store records it: success and dropped remove the
// delivery (a success is kept for the delivery log, at the time it was
// delivered), failure moves it to its next attempt, dead moves it to the
// dead letters until its retention ends.
func (r *ackResult) settlement() Settlement {
	d := r.d
	st := Settlement{Pos: r.oldKey}
	switch r.outcome {
	case OutcomeFailure:
		st.Kind, st.Entry = SettleRetry, d.entry()
	case OutcomeDead:
		d.Expires = d.Due.Add(r.retention)
		st.Kind, st.Expires = SettleDead, d.Expires
		st.Entry = QueueEntry{ID: d.ID, PartnerID: d.PartnerID, SubscriptionID: d.SubscriptionID, Record: d.marshal()}
	default:
		st.Kind = SettleDone
		if r.outcome == OutcomeSuccess && r.keep > 0 {
			st.Entry, st.Keep = d.entry(), r.keep // at Due, the time it was delivered
		}
	}
	return st
}

// committer writes acknowledgements in batches: it takes whatever results
// are waiting (up to maxAckBatch) and commits them in one transaction, so
// under load one fsync covers many deliveries.
func (s *Service) committer() {
	defer close(s.committerDone)
	batch := make([]ackResult, 0, maxAckBatch)
	for {
		select {
		case r := <-s.acks:
			batch = append(batch[:0], r)
		case <-s.stopCommit:
			// Record what finished before Close, then stop.
			batch = batch[:0]
			for len(batch) < cap(batch) {
				select {
				case r := <-s.acks:
					batch = append(batch, r)
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				s.commitAcks(batch)
			}
			return
		}
	fill:
		for len(batch) < maxAckBatch {
			select {
			case r := <-s.acks:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.commitAcks(batch)
	}
}

// commitAcks records batch in the store (as few transactions as it can),
// then reports the outcomes to the Observer, updates the counters, and
// last releases the deliveries in the scheduler (which wakes RunDue). Only
// the committer goroutine calls it: it reuses the service's buffers.
func (s *Service) commitAcks(batch []ackResult) {
	settle := s.settleBuf[:0]
	for i := range batch {
		settle = append(settle, batch[i].settlement())
	}
	committed := append(s.doneBuf[:0], make([]bool, len(batch))...)
	if err := s.store.Settle(settle, committed); err != nil {
		s.logger().Error("webhooks: recording delivery outcomes", zap.Int("count", len(batch)), zap.Error(err))
	}
	clear(settle) // drop the records for the collector
	s.settleBuf, s.doneBuf = settle[:0], committed[:0]

	// Report and count the outcomes first: a RunDue waits below for these
	// deliveries to be acknowledged, and must then see them counted. The
	// Observer hears of them before Depth changes, so whoever waits for a
	// depth also sees the outcomes that made it.
	var dq, dd int64
	for i := range batch {
		if !committed[i] {
			continue
		}
		s.cur().opts.Observer.Delivery(batch[i].d.Event.Name, batch[i].outcome)
		switch batch[i].outcome {
		case OutcomeSuccess, OutcomeDropped:
			dq--
		case OutcomeDead:
			dq--
			dd++
			s.logger().Warn("webhooks: delivery moved to dead letters", zap.String("delivery", batch[i].d.ID),
				zap.String("subscription", batch[i].d.SubscriptionID), zap.Int("attempts", batch[i].d.Attempts))
		}
	}
	s.queued.Add(dq)
	s.dead.Add(dd)
	if dq != 0 || dd != 0 {
		s.reportDepth()
	}

	sc := &s.sched
	poke := false
	sc.mu.Lock()
	for i := range batch {
		r := &batch[i]
		id := r.d.ID
		delete(sc.inflight, id)
		if pos, ok := sc.claimed[id]; ok && bytes.Equal(pos, r.oldKey) {
			delete(sc.claimed, id) // settled (or, unrecorded, left to its lease)
		}
		if sc.scanning {
			sc.doneDuring[id] = true
		}
		sc.pending--
		switch {
		case !committed[i]:
			// Not recorded: it stays due under its old key; make sure the
			// next pass looks there again.
			sc.pendingLow = minKey(sc.pendingLow, r.oldKey)
			poke = true
		case r.outcome == OutcomeFailure:
			sc.pendingLow = minKey(sc.pendingLow, SchedulePos(r.d.Due, r.d.ID))
			poke = true
		}
	}
	sc.idle.Broadcast()
	sc.mu.Unlock()
	if poke {
		sc.poke()
	}
}
