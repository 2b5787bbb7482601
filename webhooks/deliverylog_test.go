package webhooks

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func deliveryLog(t *testing.T, s *Service, partner string, f LogFilter) LogPage {
	t.Helper()
	p, err := s.DeliveryLog(partner, f)
	if err != nil {
		t.Fatalf("DeliveryLog(%s, %+v): %v", partner, f, err)
	}
	return p
}

func TestDeliveryLogKeepsDeliveredDeliveriesWithTheirAttempts(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcv := newReceiver(t, func(n int) int { return map[bool]int{true: 503, false: 200}[n == 1] })
	sub := subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	if _, err := s.Publish("p1", []Event{{EventLabelStatus, "L-1"}}, nil); err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	p := deliveryLog(t, s, "p1", LogFilter{})
	if len(p.Deliveries) != 1 || p.Deliveries[0].State != StateRetrying {
		t.Fatalf("log after a failed attempt = %+v, want one retrying delivery", p.Deliveries)
	}
	clock.Advance(time.Hour)
	runDue(t, s)
	p = deliveryLog(t, s, "p1", LogFilter{SubscriptionID: sub.ID})
	if len(p.Deliveries) != 1 {
		t.Fatalf("log after delivery = %+v, want the delivered delivery", p.Deliveries)
	}
	d := p.Deliveries[0]
	if d.State != StateDelivered || d.Identifier != "L-1" || d.Attempts != 2 || len(d.Log) != 2 ||
		d.Log[0].Status != 503 || d.Log[1].Status != 200 || !d.DeliveredAt.Equal(clock.Now()) {
		t.Fatalf("delivered entry = %+v, want state delivered, 2 attempts (503 then 200), delivered now", d)
	}
	got, err := s.Delivery("p1", sub.ID, d.ID)
	if err != nil || got.ID != d.ID || len(got.Log) != 2 {
		t.Fatalf("Delivery(%s) = %+v, %v; want its attempt history", d.ID, got, err)
	}
}

func TestDeliveryLogOffKeepsNothing(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.DeliveryLogSize = -1
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L-1"}}, nil)
	runDue(t, s)
	if p := deliveryLog(t, s, "p1", LogFilter{}); len(p.Deliveries) != 0 || len(rcv.Hits()) != 1 {
		t.Fatalf("log with DeliveryLogSize -1 = %+v (hits %d), want nothing kept", p.Deliveries, len(rcv.Hits()))
	}
	if subs, _ := db.DeliveredSubscriptions(); len(subs) != 0 {
		t.Fatalf("delivered records of %v stored, want none", subs)
	}
}

func TestDeliveryLogKeepsTheLatestOfEachSubscription(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.DeliveryLogSize = 4
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	sub := subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	for i := range 10 {
		s.Publish("p1", []Event{{EventLabelStatus, string(rune('a' + i))}}, nil)
		runDue(t, s)
		clock.Advance(time.Second)
	}
	p := deliveryLog(t, s, "p1", LogFilter{Limit: 100})
	if len(p.Deliveries) != 4 || p.Deliveries[0].Identifier != "j" || p.Deliveries[3].Identifier != "g" {
		t.Fatalf("log after 10 deliveries = %d entries (%+v), want the latest 4, j to g", len(p.Deliveries), p.Deliveries)
	}
	if err := s.Subscriptions().Delete("p1", sub.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.TrimDeliveryLog(); err != nil || n != 4 {
		t.Fatalf("TrimDeliveryLog after deleting the subscription = %d, %v; want its 4 records deleted", n, err)
	}
}

func TestDeliveryLogDropsRecordsOlderThanTheRetention(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "old"}}, nil)
	runDue(t, s)
	clock.Advance(DefaultDeadRetention + time.Minute)
	s.Publish("p1", []Event{{EventLabelStatus, "new"}}, nil)
	runDue(t, s)
	if n, err := s.TrimDeliveryLog(); err != nil || n != 1 {
		t.Fatalf("TrimDeliveryLog = %d, %v; want the delivery older than the retention deleted", n, err)
	}
	p := deliveryLog(t, s, "p1", LogFilter{})
	if len(p.Deliveries) != 1 || p.Deliveries[0].Identifier != "new" {
		t.Fatalf("log = %+v, want only the recent delivery", p.Deliveries)
	}
}

func TestDeliveryLogFiltersByStateAndEvent(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxAttempts = 1
	s := newService(t, o)
	ok := newReceiver(t, always(200))
	bad := newReceiver(t, always(500))
	subscribe(t, s, "p1", ok.URL, EventLabelStatus)
	subscribe(t, s, "p1", bad.URL, EventInboundStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L"}, {EventInboundStatus, "I"}}, nil)
	runDue(t, s)
	clock.Advance(time.Minute)
	s.Publish("p1", []Event{{EventLabelStatus, "Q"}}, nil) // not attempted yet
	cases := []struct {
		f    LogFilter
		want []string // identifiers
	}{
		{LogFilter{State: StateDelivered}, []string{"L"}},
		{LogFilter{State: StateDead}, []string{"I"}},
		{LogFilter{State: StateQueued}, []string{"Q"}},
		{LogFilter{Event: EventLabelStatus}, []string{"Q", "L"}},
		{LogFilter{Event: EventInboundStatus, State: StateDelivered}, nil},
	}
	for _, c := range cases {
		p := deliveryLog(t, s, "p1", c.f)
		var got []string
		for _, d := range p.Deliveries {
			got = append(got, d.Identifier)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("log with %+v = %q, want %q", c.f, got, c.want)
		}
	}
}

// Every partner-scoped operation answers ErrNotFound for another partner's
// subscription or delivery, exactly as for a missing one, and changes
// nothing.
func TestPartnerOperationsRefuseAnotherPartnersIDs(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxAttempts = 1
	s := newService(t, o)
	rcv := newReceiver(t, always(500))
	subA := subscribe(t, s, "A", rcv.URL+"/a", EventLabelStatus)
	subB := subscribe(t, s, "B", rcv.URL+"/b", EventLabelStatus)
	s.Publish("B", []Event{{EventLabelStatus, "secret-B"}}, nil)
	runDue(t, s)
	deadB, _ := s.Dead(ListFilter{PartnerID: "B"})
	if len(deadB) != 1 {
		t.Fatalf("B's dead letters = %+v, want 1", deadB)
	}
	idB := deadB[0].ID
	hits := len(rcv.Hits())

	if _, err := s.DeliveryLog("A", LogFilter{SubscriptionID: subB.ID}); !errors.Is(err, ErrNotFound) {
		t.Errorf("A's log of B's subscription: %v, want ErrNotFound", err)
	}
	if p := deliveryLog(t, s, "A", LogFilter{}); len(p.Deliveries) != 0 {
		t.Errorf("A's whole log = %+v, want none of B's deliveries", p.Deliveries)
	}
	if _, err := s.Delivery("A", subB.ID, idB); !errors.Is(err, ErrNotFound) {
		t.Errorf("A reading B's delivery through B's subscription: %v, want ErrNotFound", err)
	}
	if _, err := s.Delivery("A", subA.ID, idB); !errors.Is(err, ErrNotFound) {
		t.Errorf("A reading B's delivery through its own subscription: %v, want ErrNotFound", err)
	}
	if _, err := s.SendTestFor("A", subB.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("A sending a test to B's subscription: %v, want ErrNotFound", err)
	}
	if err := s.ReplayFor("A", idB); !errors.Is(err, ErrNotFound) {
		t.Errorf("A replaying B's dead delivery: %v, want ErrNotFound", err)
	}
	if _, err := s.ReplayDeadSince("A", subB.ID, time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("A replaying B's subscription: %v, want ErrNotFound", err)
	}
	if n, err := s.ReplayDeadSince("A", "", time.Time{}); err != nil || n != 0 {
		t.Errorf("A replaying all its dead deliveries = %d, %v; want 0 (B's are not A's)", n, err)
	}
	runDue(t, s)
	if q, d := s.Depth(); q != 0 || d != 1 || len(rcv.Hits()) != hits {
		t.Fatalf("after A's attempts: queued %d, dead %d, hits %d (was %d); want B's delivery still dead and nothing sent", q, d, len(rcv.Hits()), hits)
	}
}

func TestPartnerReplaysOneOrAllDeadSinceATime(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxAttempts = 1
	s := newService(t, o)
	var up atomic.Bool
	rcv := newReceiver(t, func(int) int { return map[bool]int{true: 200, false: 500}[up.Load()] })
	sub := subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "early"}}, nil)
	runDue(t, s)
	clock.Advance(time.Hour)
	since := clock.Now()
	s.Publish("p1", []Event{{EventLabelStatus, "late1"}, {EventLabelStatus, "late2"}}, nil)
	runDue(t, s)
	up.Store(true)
	n, err := s.ReplayDeadSince("p1", sub.ID, since)
	if err != nil || n != 2 {
		t.Fatalf("ReplayDeadSince = %d, %v; want the 2 that died after since", n, err)
	}
	runDue(t, s)
	dead := deliveryLog(t, s, "p1", LogFilter{State: StateDead}).Deliveries
	if len(dead) != 1 || dead[0].Identifier != "early" {
		t.Fatalf("dead after replaying since = %+v, want only the early one", dead)
	}
	if err := s.ReplayFor("p1", dead[0].ID); err != nil {
		t.Fatalf("ReplayFor: %v", err)
	}
	if err := s.ReplayFor("p1", dead[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replaying it again: %v, want ErrNotFound (no longer dead)", err)
	}
	runDue(t, s)
	if got := deliveryLog(t, s, "p1", LogFilter{State: StateDelivered}).Deliveries; len(got) != 3 {
		t.Fatalf("delivered after the replays = %+v, want all 3", got)
	}
}

func TestTestDeliveryIsMarkedAndLogged(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := newService(t, testOptions(db, newFakeClock()))
	rcv := newReceiver(t, always(200))
	sub := subscribe(t, s, "p1", rcv.URL, EventShipmentShipped)
	id, err := s.SendTestFor("p1", sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	h := rcv.Hits()
	if len(h) != 1 || h[0].Header.Get("x-hook-test") != "true" || h[0].Header.Get("x-hook-id") != id ||
		!Verify(testKey, h[0].Body, h[0].Header.Get("x-hook-signature")) {
		t.Fatalf("test delivery = %+v, want one signed request marked x-hook-test: true", h)
	}
	got, err := s.Delivery("p1", sub.ID, id)
	if err != nil || !got.Test || got.State != StateDelivered {
		t.Fatalf("Delivery of the test = %+v, %v; want it logged as a delivered test", got, err)
	}
	s.Publish("p1", []Event{{EventShipmentShipped, "S-1"}}, nil)
	runDue(t, s)
	if h := rcv.Hits(); len(h) != 2 || h[1].Header.Get("x-hook-test") != "" {
		t.Fatalf("a real delivery carries x-hook-test %q, want none", h[len(h)-1].Header.Get("x-hook-test"))
	}
}

func TestDeadDeliveryIsReadableAfterItsSubscriptionIsDeleted(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.MaxAttempts = 1
	s := newService(t, o)
	rcv := newReceiver(t, always(500))
	sub := subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L"}}, nil)
	runDue(t, s)
	dead := deliveryLog(t, s, "p1", LogFilter{State: StateDead}).Deliveries
	if len(dead) != 1 {
		t.Fatalf("dead deliveries = %+v, want 1", dead)
	}
	if err := s.Subscriptions().Delete("p1", sub.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Delivery("p1", sub.ID, dead[0].ID); err != nil || got.State != StateDead {
		t.Fatalf("Delivery after deleting its subscription = %+v, %v; want the dead delivery (it is still listed)", got, err)
	}
	if _, err := s.Delivery("p2", sub.ID, dead[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another partner reading it: %v, want ErrNotFound", err)
	}
}

func TestDeliveryLogSizeOverTheLimitIsRefused(t *testing.T) {
	o := testOptions(openDB(t, t.TempDir()), newFakeClock())
	o.DeliveryLogSize = MaxDeliveryLogSize + 1
	if _, err := New(o); err == nil {
		t.Fatalf("New with DeliveryLogSize %d succeeded, want it refused (at most %d)", o.DeliveryLogSize, MaxDeliveryLogSize)
	}
}
