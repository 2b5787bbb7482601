package webhooks

import (
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
)

// maxAckBatch bounds the acknowledgements committed in one transaction.
const maxAckBatch = 512

// ackResult is the outcome of one dispatched delivery, to be written.
type ackResult struct {
	d       *delivery // updated record (attempts, log, Due)
	oldKey  []byte    // its schedule key when it was dispatched
	outcome Outcome
	// retention of a dead delivery, from the settings the attempt started
	// with
	retention time.Duration
}

// writes applies r to txn: success and dropped delete the delivery, failure
// moves its schedule key, dead moves it to the dead letters.
func (s *Service) writes(txn *badger.Txn, r *ackResult) error {
	d := r.d
	errs := []error{txn.Delete(r.oldKey)}
	switch r.outcome {
	case OutcomeFailure:
		errs = append(errs, txn.Set(dueKey(d.Due, d.ID), d.marshal()))
	case OutcomeDead:
		d.Expires = d.Due.Add(r.retention)
		errs = append(errs,
			txn.Set([]byte(deadPrefix+d.ID), d.marshal()),
			txn.Set(timeKey(deadExpPrefix, d.Expires, d.ID), nil))
	}
	return errors.Join(errs...)
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

// ackTxn returns a transaction holding the writes of the longest prefix of
// batch whose writes all succeed, and that prefix's length (0: no
// transaction). A result whose writes fail part-way (the transaction is
// full) is never in it: the transaction is rebuilt without it, since a
// committed Delete of its old key without its new record would lose the
// delivery if the process died before the next transaction.
func (s *Service) ackTxn(batch []ackResult) (*badger.Txn, int) {
	txn := s.db.NewTransaction(true)
	for j := range batch {
		err := s.writes(txn, &batch[j])
		if err == nil {
			continue
		}
		txn.Discard()
		if !errors.Is(err, badger.ErrTxnTooBig) || j == 0 {
			s.logger().Error("webhooks: recording delivery outcome", zap.String("delivery", batch[j].d.ID), zap.Error(err))
		}
		if j == 0 {
			return nil, 0
		}
		txn = s.db.NewTransaction(true)
		for k := range j { // these fitted before, so they fit again
			if err := s.writes(txn, &batch[k]); err != nil {
				txn.Discard()
				s.logger().Error("webhooks: recording delivery outcome", zap.String("delivery", batch[k].d.ID), zap.Error(err))
				return nil, 0
			}
		}
		return txn, j
	}
	return txn, len(batch)
}

// commitAcks commits batch (splitting it if the transaction grows too big),
// then reports the outcomes to the Observer, updates the counters, and
// last releases the deliveries in the scheduler (which wakes RunDue).
func (s *Service) commitAcks(batch []ackResult) {
	committed := make([]bool, len(batch))
	for i := 0; i < len(batch); {
		txn, j := s.ackTxn(batch[i:])
		j += i
		if j == i { // even one result does not fit or failed: skip it
			i++
			continue
		}
		err := txn.Commit()
		if err != nil {
			s.logger().Error("webhooks: committing delivery outcomes", zap.Int("count", j-i), zap.Error(err))
		}
		for k := i; k < j; k++ {
			committed[k] = err == nil
		}
		i = j
	}

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
			sc.pendingLow = minKey(sc.pendingLow, dueKey(r.d.Due, r.d.ID))
			poke = true
		}
	}
	sc.idle.Broadcast()
	sc.mu.Unlock()
	if poke {
		sc.poke()
	}
}
