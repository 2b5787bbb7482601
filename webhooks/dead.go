package webhooks

import (
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Queued lists queued deliveries matching f, soonest next attempt first.
func (s *Service) Queued(f ListFilter) ([]DeliveryInfo, error) {
	out := []DeliveryInfo{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(duePrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(out) < f.limit(); it.Next() {
			d, err := itemDelivery(it.Item())
			if err != nil {
				return err
			}
			if f.match(d) {
				out = append(out, d.info(false))
			}
		}
		return nil
	})
	return out, err
}

// Dead lists dead letters matching f, oldest first (soonest purged first).
func (s *Service) Dead(f ListFilter) ([]DeliveryInfo, error) {
	out := []DeliveryInfo{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(deadExpPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(out) < f.limit(); it.Next() {
			_, id, ok := parseTimeKey(deadExpPrefix, it.Item().Key())
			if !ok {
				continue
			}
			d, err := getRecord(txn, deadPrefix, id)
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			} else if err != nil {
				return err
			}
			if f.match(d) && !d.Due.Before(f.DiedSince) { // a dead delivery's Due is when it died
				out = append(out, d.info(true))
			}
		}
		return nil
	})
	return out, err
}

func getRecord(txn *badger.Txn, prefix, id string) (*delivery, error) {
	item, err := txn.Get([]byte(prefix + id))
	if err != nil {
		return nil, err
	}
	var d *delivery
	err = item.Value(func(v []byte) error {
		var e error
		d, e = unmarshalDelivery(v)
		return e
	})
	return d, err
}

// Replay re-queues the dead letter deliveryID: due now, its attempt counter
// reset and a fresh retry period, the same x-hook-id. A delivery that is not
// dead is ErrNotFound.
func (s *Service) Replay(deliveryID string) error {
	n, err := s.replay(func(txn *badger.Txn, _ int) ([]*delivery, error) {
		d, err := getRecord(txn, deadPrefix, deliveryID)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil, ErrNotFound
		}
		return []*delivery{d}, err
	})
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

// replayBatch is how many dead letters one replay transaction moves at
// most. A dead letter is deleted, re-written and its expiry deleted; when a
// batch does not fit Badger's transaction limit (15 % of the memtable,
// internal/datadir; long attempt errors make records big), the transaction
// is dropped whole and retried with half as many.
const replayBatch = 100

// ReplaySubscription re-queues every dead letter of subscriptionID that died
// at or after since, like Replay. It returns how many it re-queued.
func (s *Service) ReplaySubscription(subscriptionID string, since time.Time) (int, error) {
	total := 0
	for {
		n, err := s.replay(func(txn *badger.Txn, limit int) ([]*delivery, error) {
			var ds []*delivery
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(deadPrefix), PrefetchValues: true})
			defer it.Close()
			for it.Rewind(); it.Valid() && len(ds) < limit; it.Next() {
				var d *delivery
				err := it.Item().Value(func(v []byte) error {
					var e error
					d, e = unmarshalDelivery(v)
					return e
				})
				if err != nil {
					return nil, err
				}
				if d.SubscriptionID == subscriptionID && !d.Due.Before(since) {
					ds = append(ds, d)
				}
			}
			return ds, nil
		})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// replay moves the dead letters pick returns (at most limit) back to the
// queue in one transaction: retried on conflict, and with a smaller limit
// when they do not fit in one.
func (s *Service) replay(pick func(txn *badger.Txn, limit int) ([]*delivery, error)) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	var moved []*delivery
	var now time.Time
	_, err := s.updateShrinking(replayBatch, func(txn *badger.Txn, limit int) error {
		moved, now = nil, s.clock().UTC()
		ds, err := pick(txn, limit)
		if err != nil {
			return err
		}
		for _, d := range ds {
			exp := timeKey(deadExpPrefix, d.Expires, d.ID)
			d.Attempts, d.First, d.Due, d.Expires = 0, time.Time{}, now, time.Time{}
			if err := errors.Join(txn.Delete([]byte(deadPrefix+d.ID)), txn.Delete(exp),
				txn.Set(dueKey(now, d.ID), d.marshal())); err != nil {
				return err
			}
		}
		moved = ds
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(moved) > 0 {
		s.queued.Add(int64(len(moved)))
		s.dead.Add(-int64(len(moved)))
		s.sched.noteDue(dueKey(now, ""))
		s.reportDepth()
	}
	return len(moved), nil
}

// updateShrinking runs fn in an update transaction with a batch limit,
// again on a conflict (up to maxConflictRetries times) and with half the
// limit when the transaction is too big (a failed transaction writes
// nothing). It returns the limit of the transaction that committed.
func (s *Service) updateShrinking(limit int, fn func(txn *badger.Txn, limit int) error) (int, error) {
	for conflicts := 0; ; {
		err := s.db.Update(func(txn *badger.Txn) error { return fn(txn, limit) })
		switch {
		case errors.Is(err, badger.ErrConflict) && conflicts < maxConflictRetries:
			conflicts++
		case errors.Is(err, badger.ErrTxnTooBig) && limit > 1:
			limit /= 2
		default:
			return limit, err
		}
	}
}

// purgeBatch is how many expired dead letters one purge transaction
// deletes at most (two deletes each); halved when they do not fit.
const purgeBatch = 2000

// PurgeDead deletes dead letters whose retention has passed (by the
// injected clock). Start runs it hourly; it returns how many it deleted.
func (s *Service) PurgeDead() (int, error) {
	total := 0
	for {
		n := 0
		limit, err := s.updateShrinking(purgeBatch, func(txn *badger.Txn, limit int) error {
			now := s.clock()
			n = 0
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(deadExpPrefix)})
			defer it.Close()
			for it.Rewind(); it.Valid() && n < limit; it.Next() {
				exp, id, ok := parseTimeKey(deadExpPrefix, it.Item().Key())
				if !ok {
					continue
				}
				if exp.After(now) {
					break
				}
				if err := errors.Join(txn.Delete(it.Item().KeyCopy(nil)), txn.Delete([]byte(deadPrefix+id))); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		if n > 0 {
			total += n
			s.dead.Add(-int64(n))
			s.reportDepth()
		}
		if n < limit {
			return total, nil
		}
	}
}
