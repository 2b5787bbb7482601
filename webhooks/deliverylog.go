package webhooks

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// A partner's delivery log: its deliveries that are queued or retrying (in
// the schedule), dead (in the dead letters) and recently delivered (the
// latest DeliveryLogSize of each subscription). Every operation here takes
// the partner it acts for: another partner's subscription or delivery is
// ErrNotFound, as a missing one is.

// LogFilter narrows a partner's delivery log. Zero fields match
// everything; Limit 0 means 50, at most 500.
type LogFilter struct {
	SubscriptionID string
	State          string // StateQueued, StateRetrying, StateDelivered or StateDead
	Event          string
	Limit          int
}

func (f LogFilter) limit() int {
	switch {
	case f.Limit <= 0:
		return 50
	case f.Limit > 500:
		return 500
	}
	return f.Limit
}

// wants reports whether the log's entries in state s may match f.
func (f LogFilter) wants(states ...string) bool {
	return f.State == "" || slices.Contains(states, f.State)
}

func (f LogFilter) match(partnerID string, in DeliveryInfo) bool {
	return in.PartnerID == partnerID && (f.SubscriptionID == "" || f.SubscriptionID == in.SubscriptionID) &&
		(f.State == "" || f.State == in.State) && (f.Event == "" || f.Event == in.Event)
}

// ValidState reports whether s names a delivery state.
func ValidState(s string) bool {
	return s == StateQueued || s == StateRetrying || s == StateDelivered || s == StateDead
}

// LogPage is one page of a delivery log, latest event first.
type LogPage struct {
	Deliveries []DeliveryInfo
	// Partial: the queue was longer than one look reads
	// (maxLogQueueScan entries), so queued deliveries may be missing.
	Partial bool
}

// maxLogQueueScan bounds the schedule entries one log page examines: the
// schedule is ordered by time, not by partner, so a page reads past other
// partners' deliveries (without decoding them).
const maxLogQueueScan = 200_000

// DeliveryLog returns partnerID's deliveries matching f, the latest
// created first. A subscription that is not the partner's is ErrNotFound.
func (s *Service) DeliveryLog(partnerID string, f LogFilter) (LogPage, error) {
	var page LogPage
	subs, err := s.logSubscriptions(partnerID, f.SubscriptionID)
	if err != nil {
		return page, err
	}
	var out []DeliveryInfo
	add := func(in DeliveryInfo) {
		if f.match(partnerID, in) {
			out = append(out, in)
		}
	}
	if f.wants(StateDelivered) {
		for _, sub := range subs {
			if err := s.scanDelivered(sub.ID, func(in DeliveryInfo) bool { add(in); return true }); err != nil {
				return page, err
			}
		}
	}
	if f.wants(StateDead) {
		if err := s.store.ScanDead(func(v []byte) (bool, error) {
			if p, ok := recordPartner(v); ok && p != partnerID {
				return true, nil
			}
			d, err := unmarshalDelivery(v)
			if err != nil {
				return false, err
			}
			add(d.info(StateDead))
			return true, nil
		}); err != nil {
			return page, err
		}
	}
	if f.wants(StateQueued, StateRetrying) {
		page.Partial, err = s.scanQueued(partnerID, func(in DeliveryInfo) { add(in) })
		if err != nil {
			return page, err
		}
	}
	slices.SortFunc(out, func(a, b DeliveryInfo) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	page.Deliveries = out[:min(len(out), f.limit())]
	return page, nil
}

// logSubscriptions returns the partner's subscriptions the log covers: one
// (sub, which must be the partner's) or all.
func (s *Service) logSubscriptions(partnerID, sub string) ([]Subscription, error) {
	if sub == "" {
		return s.subs.List(partnerID)
	}
	one, err := s.subs.Get(partnerID, sub)
	if err != nil {
		return nil, err
	}
	return []Subscription{one}, nil
}

// scanDelivered calls fn with sub's delivered deliveries, latest first,
// until it returns false.
func (s *Service) scanDelivered(sub string, fn func(DeliveryInfo) bool) error {
	return s.store.ScanDelivered(sub, func(v []byte) (bool, error) {
		d, err := unmarshalDelivery(v)
		if err != nil {
			return false, err
		}
		return fn(d.info(StateDelivered)), nil
	})
}

// scanQueued calls fn with partnerID's queued deliveries, in schedule
// order; partial reports that it stopped at maxLogQueueScan entries.
func (s *Service) scanQueued(partnerID string, fn func(DeliveryInfo)) (partial bool, err error) {
	it, err := s.store.ReadSchedule()
	if err != nil {
		return false, err
	}
	defer it.Close()
	er := newEntryReader(it)
	n := 0
	for it.Seek(nil); it.Valid(); it.Next() {
		if n++; n > maxLogQueueScan {
			return true, nil
		}
		mine, err := er.maybeOf(partnerID)
		if err != nil {
			return false, err
		}
		if !mine {
			continue
		}
		d, err := er.delivery()
		if err != nil {
			continue // set aside by the dispatcher's next pass
		}
		if d.PartnerID == partnerID {
			fn(d.info(StateQueued))
		}
	}
	return false, nil
}

// Delivery returns partnerID's delivery id of subscription sub with its
// attempt history, whatever its state (a dead one also after its
// subscription was deleted). Every record names its partner: one of
// another partner is ErrNotFound, whatever sub says.
func (s *Service) Delivery(partnerID, sub, id string) (DeliveryInfo, error) {
	mine := func(in DeliveryInfo) bool {
		return in.PartnerID == partnerID && in.SubscriptionID == sub && in.ID == id
	}
	if v, err := s.store.GetDead(id); err == nil {
		d, err := unmarshalDelivery(v)
		if err != nil {
			return DeliveryInfo{}, err
		}
		if in := d.info(StateDead); mine(in) {
			return in, nil
		}
	} else if !errors.Is(err, ErrNotFound) {
		return DeliveryInfo{}, err
	}
	var found *DeliveryInfo
	if err := s.scanDelivered(sub, func(in DeliveryInfo) bool {
		if mine(in) {
			found = &in
		}
		return found == nil
	}); err != nil {
		return DeliveryInfo{}, err
	}
	if found == nil {
		if _, err := s.scanQueued(partnerID, func(in DeliveryInfo) {
			if found == nil && mine(in) {
				found = &in
			}
		}); err != nil {
			return DeliveryInfo{}, err
		}
	}
	if found == nil {
		return DeliveryInfo{}, ErrNotFound
	}
	return *found, nil
}

// SendTestFor queues a test delivery to partnerID's subscription sub (see
// SendTest).
func (s *Service) SendTestFor(partnerID, sub string) (string, error) {
	if _, err := s.subs.Get(partnerID, sub); err != nil {
		return "", err
	}
	return s.SendTest(sub)
}

// ReplayFor re-queues partnerID's dead delivery id, as Replay does; a
// delivery that is not dead, or not the partner's, is ErrNotFound.
func (s *Service) ReplayFor(partnerID, id string) error {
	v, err := s.store.GetDead(id)
	if err != nil {
		return err
	}
	d, err := unmarshalDelivery(v)
	if err != nil {
		return err
	}
	if d.PartnerID != partnerID {
		return ErrNotFound
	}
	n, err := s.revive([]*delivery{d})
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

// ReplayDeadSince re-queues partnerID's dead deliveries that died at or
// after since, of subscription sub (the partner's) or of all its
// subscriptions (sub ""), and returns how many it re-queued.
func (s *Service) ReplayDeadSince(partnerID, sub string, since time.Time) (int, error) {
	if sub != "" {
		if _, err := s.subs.Get(partnerID, sub); err != nil {
			return 0, err
		}
	}
	return s.replayWhere(func(d *delivery) bool {
		return d.PartnerID == partnerID && (sub == "" || d.SubscriptionID == sub) && !d.Due.Before(since)
	})
}

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
