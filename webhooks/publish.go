package webhooks

import (
	"fmt"

	"go.uber.org/zap"
)

// Publish durably queues one delivery per matching subscription of
// partnerID for each event; with (may be nil) are writes of another store
// of the same backend committed in the same transaction as the deliveries
// (the feed reader stores its cursor there). When it returns nil every
// delivery is durable. It returns the number of deliveries queued. Unknown
// event names are refused (*ValidationError) before anything is written.
// The deliveries go to the subscriptions this instance's index holds: on a
// storage shared with other instances, SyncSubscriptions first brings in
// those the others committed.
func (s *Service) Publish(partnerID string, events []Event, with TxWrites) (int, error) {
	return s.publish(partnerID, events, nil, with)
}

// PublishKeyed is Publish with a key for each event (keys[i] names
// events[i]; the feed reader uses the feed, the change and its content).
// The deliveries of an event with a key get stable ids: the same key and
// subscription always give the same id (x-hook-id), so an event queued
// again (a feed re-read after forgetting the changes it had done) reaches a
// receiver with the id it saw before, and a receiver that de-duplicates on
// x-hook-id processes it once. An empty key gives random ids, as Publish.
func (s *Service) PublishKeyed(partnerID string, events []Event, keys []string, with TxWrites) (int, error) {
	if len(keys) != len(events) {
		return 0, fmt.Errorf("webhooks: %d keys for %d events", len(keys), len(events))
	}
	return s.publish(partnerID, events, keys, with)
}

// SyncSubscriptions makes the index Publish fans out from hold every
// subscription committed before the call, by any instance, and none deleted
// before it (SubscriptionStore.Sync): on a shared storage one small query,
// and a reload when another instance created or deleted a subscription
// since the index was loaded. The feed reader calls it once per batch of
// changes, after reading them and before publishing their events, so a
// subscription created before a change was read gets the change's events.
func (s *Service) SyncSubscriptions() error {
	if s.closed.Load() {
		return errClosed
	}
	return s.subs.Sync()
}

func (s *Service) publish(partnerID string, events []Event, keys []string, with TxWrites) (int, error) {
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
	if err := s.enqueue(ds, with); err != nil {
		return 0, err
	}
	return len(ds), nil
}

// enqueue writes ds (due at their Due time) with the writes with, then
// updates the counters and wakes the dispatcher.
func (s *Service) enqueue(ds []*delivery, with TxWrites) error {
	entries := make([]QueueEntry, len(ds))
	var low []byte
	for i, d := range ds {
		entries[i] = d.entry()
		low = minKey(low, entries[i].Pos)
	}
	if err := s.store.Enqueue(entries, with); err != nil {
		if len(ds) > 0 {
			// Part of them may be queued (a backend splits big batches):
			// count again, and let the dispatcher look.
			if cerr := s.recount(); cerr != nil {
				s.logger().Error("webhooks: counting the queue after a failed enqueue", zap.Error(cerr))
			}
			s.sched.noteDue(low)
			s.reportDepth()
		}
		return err
	}
	if len(ds) > 0 {
		s.queued.Add(int64(len(ds)))
		s.sched.noteDue(low)
		s.reportDepth()
	}
	return nil
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
