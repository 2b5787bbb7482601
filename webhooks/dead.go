package webhooks

import (
	"time"
)

// Queued lists queued deliveries matching f, soonest next attempt first.
func (s *Service) Queued(f ListFilter) ([]DeliveryInfo, error) {
	out := []DeliveryInfo{}
	it, err := s.store.ReadSchedule()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	er := newEntryReader(it)
	for it.Seek(nil); it.Valid() && len(out) < f.limit(); it.Next() {
		d, err := er.delivery()
		if err != nil {
			return nil, err
		}
		if f.match(d) {
			out = append(out, d.info(StateQueued))
		}
	}
	return out, nil
}

// Dead lists dead letters matching f, oldest first (soonest purged first).
func (s *Service) Dead(f ListFilter) ([]DeliveryInfo, error) {
	out := []DeliveryInfo{}
	err := s.store.ScanDead(func(v []byte) (bool, error) {
		d, err := unmarshalDelivery(v)
		if err != nil {
			return false, err
		}
		if f.match(d) && !d.Due.Before(f.DiedSince) { // a dead delivery's Due is when it died
			out = append(out, d.info(StateDead))
		}
		return len(out) < f.limit(), nil
	})
	return out, err
}

// Replay re-queues the dead letter deliveryID: due now, its attempt counter
// reset and a fresh retry period, the same x-hook-id. A delivery that is not
// dead is ErrNotFound.
func (s *Service) Replay(deliveryID string) error {
	if s.closed.Load() {
		return errClosed
	}
	v, err := s.store.GetDead(deliveryID)
	if err != nil {
		return err
	}
	d, err := unmarshalDelivery(v)
	if err != nil {
		return err
	}
	n, err := s.revive([]*delivery{d})
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

// replayBatch is how many dead letters one revival moves at most.
const replayBatch = 100

// ReplaySubscription re-queues every dead letter of subscriptionID that died
// at or after since, like Replay. It returns how many it re-queued.
func (s *Service) ReplaySubscription(subscriptionID string, since time.Time) (int, error) {
	return s.replayWhere(func(d *delivery) bool {
		return d.SubscriptionID == subscriptionID && !d.Due.Before(since)
	})
}

// replayWhere re-queues every dead letter that match accepts, in batches,
// and returns how many it re-queued.
func (s *Service) replayWhere(match func(*delivery) bool) (int, error) {
	total := 0
	for {
		var ds []*delivery
		err := s.store.ScanDead(func(v []byte) (bool, error) {
			d, err := unmarshalDelivery(v)
			if err != nil {
				return false, err
			}
			if match(d) {
				ds = append(ds, d)
			}
			return len(ds) < replayBatch, nil
		})
		if err != nil || len(ds) == 0 {
			return total, err
		}
		n, err := s.revive(ds)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// revive moves the dead letters ds back to the queue, due now with their
// attempt counter reset, and returns how many it moved (those replayed or
// purged meanwhile are not).
func (s *Service) revive(ds []*delivery) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	now := s.clock().UTC()
	items := make([]Revival, len(ds))
	for i, d := range ds {
		exp := d.Expires
		d.Attempts, d.First, d.Due, d.Expires = 0, time.Time{}, now, time.Time{}
		items[i] = Revival{ID: d.ID, Expires: exp, Entry: d.entry()}
	}
	n, err := s.store.Revive(items)
	if n > 0 {
		s.queued.Add(int64(n))
		s.dead.Add(-int64(n))
		s.sched.noteDue(SchedulePos(now, ""))
		s.reportDepth()
	}
	return n, err
}

// purgeBatch is how many expired dead letters one PurgeDead call to the
// store deletes at most.
const purgeBatch = 2000

// PurgeDead deletes dead letters whose retention has passed (by the
// injected clock). Start runs it hourly; it returns how many it deleted.
func (s *Service) PurgeDead() (int, error) {
	total := 0
	for {
		n, err := s.store.PurgeDead(s.clock(), purgeBatch)
		if n > 0 {
			total += n
			s.dead.Add(-int64(n))
			s.reportDepth()
		}
		if err != nil || n < purgeBatch {
			return total, err
		}
	}
}
