package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deliverAcross starts the dispatchers of n instances on one database,
// publishes events deliveries (half for each of two partners, from the
// instances in turn) to a receiver that accepts everything, and waits
// until that many requests arrived. It returns the receiver and the
// instances.
func deliverAcross(t *testing.T, n, events int) (*receiver, []*gateway) {
	t.Helper()
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	rcv := newSharedReceiver(t, func(string) int { return http200 })
	tune := func(o *webhooks.Options) { o.PerTargetConcurrency = 8 }
	gws := []*gateway{newGateway(t, dsn, "gw0", clock, tune)}
	// Subscriptions before the other instances start: each loads them
	// when it starts.
	gws[0].subscribe(t, "p1", rcv.URL+"/p1")
	gws[0].subscribe(t, "p2", rcv.URL+"/p2")
	for i := 1; i < n; i++ {
		gws = append(gws, newGateway(t, dsn, "gw"+strconv.Itoa(i), clock, tune))
	}
	for _, g := range gws {
		g.svc.Start()
	}
	const batch = 50
	for i := 0; i < events; i += batch {
		ids := make([]string, 0, batch)
		for j := i; j < min(i+batch, events); j++ {
			ids = append(ids, fmt.Sprintf("ev%05d", j))
		}
		gws[(i/batch)%n].publish(t, "p"+strconv.Itoa(1+(i/batch)%2), ids...)
	}
	rcv.await(t, events, "deliveries across the instances")
	return rcv, gws
}

const http200 = 200

// checkOnceEach fails t unless the receiver got exactly events distinct
// deliveries, each once, and every instance made some of them, and the
// queue is empty as each instance counts it.
func checkOnceEach(t *testing.T, rcv *receiver, gws []*gateway, events int) {
	t.Helper()
	// Every attempt's outcome is written before the queue is empty.
	deadline := time.Now().Add(within)
	for {
		q, d := gws[0].depth(t)
		if q == 0 && d == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d queued and %d dead deliveries left after every delivery arrived, want none", q, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	count := rcv.perID("")
	if len(count) != events {
		t.Errorf("%d distinct deliveries arrived, want %d: none lost", len(count), events)
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("delivery %s arrived %d times, want once: no instance attempts a delivery another holds", id, n)
		}
	}
	if got := len(rcv.arrivals()); got != events {
		t.Errorf("%d requests in all, want %d", got, events)
	}
	for _, g := range gws {
		if len(rcv.perID(g.name)) == 0 {
			t.Errorf("instance %s delivered nothing: want every instance to take part", g.name)
		}
		if q, d := g.depth(t); q != 0 || d != 0 {
			t.Errorf("instance %s counts %d queued and %d dead, want the database's 0 and 0", g.name, q, d)
		}
	}
}

// waitOutcomes waits until g's observer heard of n outcomes.
func waitOutcomes(t *testing.T, g *gateway, n int) {
	t.Helper()
	deadline := time.After(within)
	for i := 0; i < n; i++ {
		select {
		case <-g.obs.seen:
		case <-deadline:
			t.Fatalf("%s recorded %d of %d outcomes within %s", g.name, i, n, within)
		}
	}
}

// TestTwoInstancesDeliverAThousandEventsOnceEach: two dispatchers on one
// database share 1000 deliveries published through both; each arrives
// once, none is lost.
func TestTwoInstancesDeliverAThousandEventsOnceEach(t *testing.T) {
	const events = 1000
	rcv, gws := deliverAcross(t, 2, events)
	checkOnceEach(t, rcv, gws, events)
}

func TestThreeInstancesAttemptEachDeliveryOnce(t *testing.T) {
	const events = 300
	rcv, gws := deliverAcross(t, 3, events)
	checkOnceEach(t, rcv, gws, events)
}

// TestDeliveriesOfAnInstanceThatDiedAreDeliveredByAnotherAfterTheLease:
// instance A claims five deliveries and dies with their attempts hanging
// (it neither records nor releases anything). B does not attempt them while
// A's leases hold, and delivers each once when they have run out.
func TestDeliveriesOfAnInstanceThatDiedAreDeliveredByAnotherAfterTheLease(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	hang := make(chan struct{})
	rcv := newSharedReceiver(t, func(from string) int {
		if from == "A" {
			<-hang
		}
		return http200
	})
	t.Cleanup(func() { close(hang) }) // before the receiver closes
	tune := func(o *webhooks.Options) { o.Timeout = time.Minute }
	a := newGateway(t, dsn, "A", clock, tune)
	a.subscribe(t, "p1", rcv.URL)
	b := newGateway(t, dsn, "B", clock, tune)
	a.publish(t, "p1", "e1", "e2", "e3", "e4", "e5")
	a.svc.Start()
	rcv.await(t, 4, "A's attempts") // four: the per-target cap
	a.kill()

	b.takesOverAfterLease(t, rcv, clock, 3*time.Minute, "A's") // the lease: three attempt timeouts
}

// TestAStoppedInstanceReleasesWhatItHeld: an instance that closes gives
// back the deliveries it claimed and had not delivered; another delivers
// them at once, without waiting for their lease.
func TestAStoppedInstanceReleasesWhatItHeld(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	hang := make(chan struct{})
	rcv := newSharedReceiver(t, func(from string) int {
		if from == "A" {
			<-hang
		}
		return http200
	})
	t.Cleanup(func() { close(hang) }) // before the receiver closes
	tune := func(o *webhooks.Options) { o.Timeout = time.Minute }
	a := newGateway(t, dsn, "A", clock, tune)
	a.subscribe(t, "p1", rcv.URL)
	b := newGateway(t, dsn, "B", clock, tune)
	a.publish(t, "p1", "e1", "e2", "e3", "e4", "e5")
	a.svc.Start()
	rcv.await(t, 4, "A's attempts")
	a.svc.Close()

	if n := b.runDue(t); n != 5 {
		t.Fatalf("B made %d attempts after A closed, want the five deliveries A released", n)
	}
	if q, d := b.depth(t); q != 0 || d != 0 {
		t.Errorf("after B's deliveries: %d queued, %d dead; want none", q, d)
	}
}

// TestAnInstanceThatLostItsLeaseDoesNotSettleOverTheOthersClaim: A's
// attempt hangs past its lease (A did not renew it); B claims the delivery
// and attempts it. A's attempt fails while B's is in flight: A's retry must
// not be recorded (it would move the delivery from under B's claim and have
// it attempted again after B's success).
//
// Only B's clock moves past the lease: A's stays at the time A claimed, so
// A's dispatcher (polling on its own) never finds the delivery due again
// and claims it before B does. To A its lease still holds; whose claim
// counts is the database's to say.
func TestAnInstanceThatLostItsLeaseDoesNotSettleOverTheOthersClaim(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clockA, clockB := NewTestClock(t0), NewTestClock(t0)
	letA, letB := make(chan struct{}), make(chan struct{})
	rcv := newSharedReceiver(t, func(from string) int {
		if from == "A" {
			<-letA
			return 500
		}
		<-letB
		return http200
	})
	var onceA, onceB sync.Once
	freeA := func() { onceA.Do(func() { close(letA) }) }
	freeB := func() { onceB.Do(func() { close(letB) }) }
	t.Cleanup(freeA) // before the receiver closes
	t.Cleanup(freeB)
	// A renews its leases every attempt timeout of real time: an hour, so
	// never during the test.
	tune := func(o *webhooks.Options) { o.Timeout = time.Hour }
	a := newGateway(t, dsn, "A", clockA, tune)
	a.subscribe(t, "p1", rcv.URL)
	b := newGateway(t, dsn, "B", clockB, tune)
	a.publish(t, "p1", "e1")
	a.svc.Start()
	rcv.awaitFrom(t, "A", 1, "A's attempt")
	clockB.Advance(3*time.Hour + time.Second) // A's lease ran out
	attemptsB := make(chan int, 1)
	go func() { n, _ := b.svc.RunDue(context.Background()); attemptsB <- n }()
	rcv.awaitFrom(t, "B", 1, "B's attempt")
	freeA()
	waitOutcomes(t, a, 1)
	if got := a.obs.count(webhooks.OutcomeFailure); got != 1 {
		t.Fatalf("A recorded %d failures, want its one failed attempt", got)
	}
	freeB()
	if n := <-attemptsB; n != 1 {
		t.Fatalf("B made %d attempts, want 1", n)
	}
	if q, d := b.depth(t); q != 0 || d != 0 {
		t.Fatalf("after A's late failure and B's success: %d queued, %d dead; want none: B held the claim, B's outcome counts", q, d)
	}
	if na, nb := len(rcv.perID("A")), len(rcv.perID("B")); na != 1 || nb != 1 {
		t.Fatalf("A sent %d requests and B %d, want one each: the delivery is attempted again by nobody", na, nb)
	}
}

// TestTheOperatorViewsAnswerAlikeOnEveryInstance: a delivery that died on
// A is listed as dead by B, replayed through B, delivered by A; the depth
// each instance reports is the database's.
func TestTheOperatorViewsAnswerAlikeOnEveryInstance(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	status := make(chan int, 1)
	status <- 500
	rcv := newSharedReceiver(t, func(string) int {
		s := <-status
		status <- s
		return s
	})
	tune := func(o *webhooks.Options) { o.MaxAttempts = 1 }
	a := newGateway(t, dsn, "A", clock, tune)
	a.subscribe(t, "p1", rcv.URL)
	b := newGateway(t, dsn, "B", clock, tune)
	a.publish(t, "p1", "e1", "e2")
	if q, d := b.depth(t); q != 2 || d != 0 {
		t.Fatalf("B's depth after A queued two: %d queued, %d dead; want 2 and 0", q, d)
	}
	queued, err := b.svc.Queued(webhooks.ListFilter{})
	if err != nil || len(queued) != 2 {
		t.Fatalf("B's list of queued deliveries: %d (%v), want A's two", len(queued), err)
	}
	if n := a.runDue(t); n != 2 {
		t.Fatalf("A made %d attempts, want 2", n)
	}
	dead, err := b.svc.Dead(webhooks.ListFilter{})
	if err != nil || len(dead) != 2 || len(dead[0].Log) != 1 {
		t.Fatalf("B's list of dead deliveries: %+v (%v), want the two that died on A, with A's attempt logged", dead, err)
	}
	if q, d := b.depth(t); q != 0 || d != 2 {
		t.Fatalf("B's depth after they died on A: %d queued, %d dead; want 0 and 2", q, d)
	}
	<-status
	status <- http200
	if err := b.svc.Replay(dead[0].ID); err != nil {
		t.Fatalf("replaying through B: %v", err)
	}
	if n := a.runDue(t); n != 1 {
		t.Fatalf("A made %d attempts after B's replay, want 1", n)
	}
	ids := slices.Collect(func(yield func(string) bool) {
		for _, x := range rcv.arrivals() {
			if !yield(x.id) {
				return
			}
		}
	})
	if len(ids) != 3 || ids[2] != dead[0].ID {
		t.Fatalf("arrivals %v, want the two failed attempts, then the replayed %s", ids, dead[0].ID)
	}
	if q, d := a.depth(t); q != 0 || d != 1 {
		t.Fatalf("A's depth after the replay was delivered: %d queued, %d dead; want 0 and 1", q, d)
	}
}

// TestADeliveryForASubscriptionMadeOnAnotherInstanceIsNotDropped: B
// started before A created the subscription, so B does not know it; B
// claims the delivery A queued for it and delivers it (the store has the
// subscription) rather than dropping it.
func TestADeliveryForASubscriptionMadeOnAnotherInstanceIsNotDropped(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	rcv := newSharedReceiver(t, func(string) int { return http200 })
	a := newGateway(t, dsn, "A", clock, nil)
	b := newGateway(t, dsn, "B", clock, nil)
	a.subscribe(t, "p1", rcv.URL)
	a.publish(t, "p1", "e1", "e2")
	if n := b.runDue(t); n != 2 {
		t.Fatalf("B made %d attempts, want the two deliveries of A's subscription", n)
	}
	if got := len(rcv.perID("B")); got != 2 || b.obs.count(webhooks.OutcomeDropped) != 0 {
		t.Fatalf("B delivered %d and dropped %d, want both delivered", got, b.obs.count(webhooks.OutcomeDropped))
	}
}

// TestADeliveryForASubscriptionDeletedOnAnotherInstanceIsDropped: the
// subscription was deleted on A after A queued a delivery for it: once the
// deletion has reached B (within a second: until then B may still send
// it), B drops the delivery.
func TestADeliveryForASubscriptionDeletedOnAnotherInstanceIsDropped(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	clock := NewTestClock(t0)
	rcv := newSharedReceiver(t, func(string) int { return http200 })
	a := newGateway(t, dsn, "A", clock, nil)
	b := newGateway(t, dsn, "B", clock, nil)
	sub := a.subscribe(t, "p1", rcv.URL)
	a.publish(t, "p1", "e1")
	if err := a.svc.Subscriptions().Delete("p1", sub.ID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "B learns of the deletion on A", func() bool {
		_, err := b.svc.Subscriptions().Get("p1", sub.ID)
		return err != nil
	})
	b.runDue(t)
	if len(rcv.arrivals()) != 0 || b.obs.count(webhooks.OutcomeDropped) != 1 {
		t.Fatalf("%d requests, %d dropped; want the delivery dropped, not sent", len(rcv.arrivals()), b.obs.count(webhooks.OutcomeDropped))
	}
	if q, d := b.depth(t); q != 0 || d != 0 {
		t.Fatalf("%d queued, %d dead after the drop; want none", q, d)
	}
}
