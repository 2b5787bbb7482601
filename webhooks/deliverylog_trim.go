package webhooks

import (
	"go.uber.org/zap"
)

// The delivery log keeps the latest DeliveryLogSize delivered deliveries of
// each subscription. The committer writes one record per delivery (in the
// transaction that removes it from the queue) and counts, per
// subscription, the records written since it last asked for a trim; at half
// the log's size it asks the maintenance loop to trim that subscription.
// So a subscription holds at most about 1.5 times the log's size between
// trims, and the trim, not the delivery, pays for the deletes. The hourly
// sweep trims every subscription (deleted ones to nothing) and drops
// records older than DeadRetention.

// noteDelivered counts a kept record of sub; the committer goroutine alone
// calls it.
func (s *Service) noteDelivered(sub string) {
	size := s.cur().opts.DeliveryLogSize
	s.logCounts[sub]++
	if s.logCounts[sub] < max(size/2, 1) {
		return
	}
	delete(s.logCounts, sub)
	s.trimMu.Lock()
	s.trimDue[sub] = true
	s.trimMu.Unlock()
	select {
	case s.trimWake <- struct{}{}:
	default:
	}
}

// trimDueLogs trims the subscriptions whose logs have grown past their
// size since they were last trimmed.
func (s *Service) trimDueLogs() {
	s.trimMu.Lock()
	due := s.trimDue
	s.trimDue = map[string]bool{}
	s.trimMu.Unlock()
	for sub := range due {
		if _, err := s.trimLog(sub); err != nil {
			s.logger().Warn("webhooks: trimming the delivery log", zap.String("subscription", sub), zap.Error(err))
		}
	}
}

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
