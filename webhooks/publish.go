package webhooks

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// maxConflictRetries bounds the retries of a transaction that conflicts
// (only extra's reads can conflict: Publish itself writes fresh keys).
const maxConflictRetries = 16

// Publish durably queues one delivery per matching subscription of
// partnerID for each event; extra (may be nil) runs inside the same Badger
// transaction (the feed reader stores its cursor there). When it returns nil
// every delivery is fsynced on disk. It returns the number of deliveries
// queued. Deliveries are written in one transaction; only if that is too big
// for Badger are they split, and extra then runs in the last one. Unknown
// event names are refused (*ValidationError) before anything is written.
func (s *Service) Publish(partnerID string, events []Event, extra func(txn *badger.Txn) error) (int, error) {
	return s.publish(partnerID, events, nil, extra)
}

// PublishKeyed is Publish with a key for each event (keys[i] names
// events[i]; the feed reader uses the feed, the change and its content).
// The deliveries of an event with a key get stable ids: the same key and
// subscription always give the same id (x-hook-id), so an event queued
// again (a feed re-read after forgetting the changes it had done) reaches a
// receiver with the id it saw before, and a receiver that de-duplicates on
// x-hook-id processes it once. An empty key gives random ids, as Publish.
func (s *Service) PublishKeyed(partnerID string, events []Event, keys []string, extra func(txn *badger.Txn) error) (int, error) {
	if len(keys) != len(events) {
		return 0, fmt.Errorf("webhooks: %d keys for %d events", len(keys), len(events))
	}
	return s.publish(partnerID, events, keys, extra)
}

func (s *Service) publish(partnerID string, events []Event, keys []string, extra func(txn *badger.Txn) error) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	if !validPartner(partnerID) {
		return 0, &ValidationError{Field: "partner", Reason: "invalid partner id"}
	}
	for _, e := range events {
		if !ValidEvent(e.Name) {
			return 0, &ValidationError{Field: "event", Reason: fmt.Sprintf("unknown event name %q", e.Name)}
		}
	}
	now := s.clock().UTC()
	var ds []*delivery
	for i, e := range events {
		key := ""
		if keys != nil {
			key = keys[i]
		}
		subs, _ := s.subs.ForPartnerEvent(partnerID, e.Name)
		for _, sub := range subs {
			ds = append(ds, &delivery{ID: deliveryID(key, sub.ID), SubscriptionID: sub.ID, PartnerID: partnerID,
				Event: e, URL: sub.NotificationURL, Created: now, Due: now})
		}
	}
	if err := s.enqueue(ds, extra); err != nil {
		return 0, err
	}
	return len(ds), nil
}

// enqueue writes ds (due at their Due time) and runs extra, in as few
// transactions as Badger allows (extra in the last one), then updates
// counters and wakes the dispatcher.
func (s *Service) enqueue(ds []*delivery, extra func(txn *badger.Txn) error) error {
	for i, done := 0, false; !done; {
		n, last, err := s.enqueueChunk(ds[i:], extra)
		if err != nil {
			return err
		}
		if n > 0 {
			s.queued.Add(int64(n))
			var low []byte
			for _, d := range ds[i : i+n] {
				low = minKey(low, dueKey(d.Due, ""))
			}
			s.sched.noteDue(low)
		}
		i += n
		done = last
	}
	if len(ds) > 0 {
		s.reportDepth()
	}
	return nil
}

// enqueueChunk writes as many of ds as fit in one transaction; when all of
// them fit it also runs extra there and reports last. It returns how many
// deliveries it wrote.
func (s *Service) enqueueChunk(ds []*delivery, extra func(txn *badger.Txn) error) (n int, last bool, err error) {
	for try := 0; ; try++ {
		txn := s.db.NewTransaction(true)
		n, err = fill(txn, ds)
		last = err == nil && n == len(ds)
		if last && extra != nil {
			err = extra(txn)
			if errors.Is(err, badger.ErrTxnTooBig) && n > 0 {
				// extra does not fit beside the deliveries: commit part of
				// them now and run extra with the rest in a later one.
				txn.Discard()
				txn = s.db.NewTransaction(true)
				n, err = fill(txn, ds[:max(n/2, 1)])
				last = false
			}
		}
		if err == nil && n == 0 && !last {
			err = errors.New("webhooks: a delivery does not fit in a transaction")
		}
		if err != nil {
			txn.Discard()
			return 0, false, err
		}
		err = txn.Commit()
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("webhooks: queueing deliveries: %w", err)
		}
		return n, last, nil
	}
}

// fill writes ds into txn until it is full; ErrTxnTooBig is not an error
// here, the count tells how many fit.
func fill(txn *badger.Txn, ds []*delivery) (int, error) {
	for i, d := range ds {
		err := txn.Set(dueKey(d.Due, d.ID), d.marshal())
		if errors.Is(err, badger.ErrTxnTooBig) {
			return i, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return len(ds), nil
}

// SendTest queues a test delivery for one subscription only: the
// subscription's event with identifier "test". It returns the delivery id
// (its x-hook-id).
func (s *Service) SendTest(subscriptionID string) (string, error) {
	if s.closed.Load() {
		return "", errClosed
	}
	sub, ok := s.subs.lookup(subscriptionID)
	if !ok {
		return "", ErrNotFound
	}
	now := s.clock().UTC()
	d := &delivery{ID: newID("whd_"), SubscriptionID: sub.ID, PartnerID: sub.PartnerID,
		Event: Event{Name: sub.Event, Identifier: "test"}, URL: sub.NotificationURL,
		Test: true, Created: now, Due: now}
	if err := s.enqueue([]*delivery{d}, nil); err != nil {
		return "", err
	}
	return d.ID, nil
}
