package webhooks

// The delivery log keeps the latest DeliveryLogSize delivered deliveries
// of each subscription: the committer writes one record per delivery (in
// the transaction that removes it from the queue) and the store keeps at
// most that many per subscription (Settlement.Keep). The hourly sweep
// drops records older than DeadRetention and those of deleted
// subscriptions.

// trimLog trims sub's delivered records to the log's size (none for a
// deleted subscription) and drops those older than the dead retention.
func (s *Service) trimLog(sub string) (int, error) {
	o := s.cur().opts
	keep := max(o.DeliveryLogSize, 0)
	if _, ok := s.subs.lookup(sub); !ok {
		keep = 0
	}
	return s.store.TrimDelivered(sub, keep, s.clock().Add(-o.DeadRetention))
}

// TrimDeliveryLog trims every subscription's delivered records (see
// trimLog); the maintenance loop runs it hourly. It returns how many
// records it deleted.
func (s *Service) TrimDeliveryLog() (int, error) {
	subs, err := s.store.DeliveredSubscriptions()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, sub := range subs {
		n, err := s.trimLog(sub)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
