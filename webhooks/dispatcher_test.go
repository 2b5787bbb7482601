package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

func subscribe(t testing.TB, s *Service, partner, url, event string) Subscription {
	t.Helper()
	sub, _, err := s.Subscriptions().Create(context.Background(), partner, url, event)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func runDue(t testing.TB, s *Service) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := s.RunDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeliveryRetriesThenSucceeds: the receiver fails three times and then
// answers 200: four requests, same x-hook-id, attempts 1..4, each signed,
// timestamps following the injected clock.
func TestDeliveryRetriesThenSucceeds(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.StandardWebhooks = true
	o.UserAgent = "Fulfilgate/test"
	s := newService(t, o)
	rcv := newReceiver(t, func(n int) int {
		if n <= 3 {
			return []int{500, 503, 429}[n-1]
		}
		return 200
	})
	subscribe(t, s, "p1", rcv.URL+"/hook", EventShipmentShipped)
	subscribe(t, s, "p2", rcv.URL+"/other", EventShipmentShipped) // another partner: not notified
	n, err := s.Publish("p1", []Event{{Name: EventShipmentShipped, Identifier: `SHP-"1"`}}, nil)
	if err != nil || n != 1 {
		t.Fatalf("publish: %d %v", n, err)
	}
	var stamps []int64
	for i := 1; i <= 4; i++ {
		stamps = append(stamps, clock.Now().Unix())
		if got := runDue(t, s); got != 1 {
			t.Fatalf("round %d: %d attempts", i, got)
		}
		if q, _ := s.Depth(); (i < 4 && q != 1) || (i == 4 && q != 0) {
			t.Fatalf("round %d: queued %d", i, q)
		}
		if i < 4 {
			if again := runDue(t, s); again != 0 {
				t.Fatalf("retry made before its time: %d", again)
			}
			clock.Advance(s.RetryPolicy().Ceiling(i)) // Rand 0.5: due in the middle
		}
	}
	hits := rcv.Hits()
	if len(hits) != 4 {
		t.Fatalf("%d requests", len(hits))
	}
	wantBody := `{"type":"shipment.shipped","resource":"shipment","identifier":"SHP-\"1\""}`
	id := hits[0].Header.Get("x-hook-id")
	if !strings.HasPrefix(id, "whd_") {
		t.Fatalf("x-hook-id %q", id)
	}
	for i, h := range hits {
		if string(h.Body) != wantBody {
			t.Fatalf("body %s", h.Body)
		}
		if h.Header.Get("x-hook-id") != id || h.Header.Get("x-hook-attempt") != strconv.Itoa(i+1) {
			t.Fatalf("attempt %d: id %s attempt %s", i+1, h.Header.Get("x-hook-id"), h.Header.Get("x-hook-attempt"))
		}
		if h.Header.Get("x-hook-timestamp") != strconv.FormatInt(stamps[i], 10) {
			t.Fatalf("attempt %d timestamp %s, want %d", i+1, h.Header.Get("x-hook-timestamp"), stamps[i])
		}
		if !Verify(testKey, h.Body, h.Header.Get("x-hook-signature")) {
			t.Fatalf("attempt %d: bad signature", i+1)
		}
		if h.Header.Get("Content-Type") != "application/json" || h.Header.Get("User-Agent") != "Fulfilgate/test" {
			t.Fatalf("headers %v", h.Header)
		}
		if h.Header.Get("webhook-id") != id || h.Header.Get("webhook-timestamp") != strconv.FormatInt(stamps[i], 10) ||
			h.Header.Get("webhook-signature") != StandardSignature(testKey, id, stamps[i], h.Body) {
			t.Fatalf("standard webhooks headers %v", h.Header)
		}
	}
}

type countingObserver struct {
	outcomes map[Outcome]*atomic.Int64
	attempts atomic.Int64
}

func newCountingObserver() *countingObserver {
	o := &countingObserver{outcomes: map[Outcome]*atomic.Int64{}}
	for _, k := range []Outcome{OutcomeSuccess, OutcomeFailure, OutcomeDead, OutcomeDropped} {
		o.outcomes[k] = new(atomic.Int64)
	}
	return o
}
func (o *countingObserver) Delivery(_ string, out Outcome) { o.outcomes[out].Add(1) }
func (o *countingObserver) Attempt(time.Duration, int)     { o.attempts.Add(1) }
func (o *countingObserver) Depth(int64, int64)             {}
func (o *countingObserver) count(out Outcome) int64        { return o.outcomes[out].Load() }

// TestDeliveryOutageGoesDeadThenReplays simulates a receiver that fails for
// more than 24 hours, in milliseconds, with the injected clock: the delivery
// stops at the limits, moves to dead letters, and a replay delivers it with
// the same x-hook-id and attempts starting at 1 again.
func TestDeliveryOutageGoesDeadThenReplays(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	obs := newCountingObserver()
	o.Observer = obs
	s := newService(t, o)
	var up atomic.Bool
	rcv := newReceiver(t, func(int) int {
		if up.Load() {
			return 204
		}
		return 503
	})
	sub := subscribe(t, s, "p1", rcv.URL, EventAdjustmentPosted)
	if _, err := s.Publish("p1", []Event{{EventAdjustmentPosted, "ADJ-1"}}, nil); err != nil {
		t.Fatal(err)
	}
	first := clock.Now()
	attempts := 0
	for i := 0; i < 1000; i++ {
		attempts += runDue(t, s)
		if q, _ := s.Depth(); q == 0 {
			break
		}
		qs, _ := s.Queued(ListFilter{})
		clock.Advance(qs[0].NextAttempt.Sub(clock.Now()))
	}
	elapsed := clock.Now().Sub(first)
	queued, dead := s.Depth()
	if queued != 0 || dead != 1 {
		t.Fatalf("queued %d dead %d", queued, dead)
	}
	// Rand 0.5: the mean delay; the 24 h period ends it before 185 attempts.
	if attempts < 150 || attempts > 185 || elapsed > 24*time.Hour || elapsed < 20*time.Hour {
		t.Fatalf("%d attempts over %v", attempts, elapsed)
	}
	if len(rcv.Hits()) != attempts || obs.count(OutcomeDead) != 1 || obs.count(OutcomeFailure) != int64(attempts-1) {
		t.Fatalf("hits %d attempts %d dead %d failures %d", len(rcv.Hits()), attempts, obs.count(OutcomeDead), obs.count(OutcomeFailure))
	}
	ds, err := s.Dead(ListFilter{SubscriptionID: sub.ID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("dead list %v %v", ds, err)
	}
	d := ds[0]
	if d.Attempts != attempts || len(d.Log) != MaxAttemptLog || d.Log[MaxAttemptLog-1].Attempt != attempts ||
		d.Log[0].Status != 503 || d.Identifier != "ADJ-1" || d.DeadAt.IsZero() {
		t.Fatalf("dead info %+v", d)
	}
	if other, _ := s.Dead(ListFilter{PartnerID: "p2"}); len(other) != 0 {
		t.Fatalf("partner filter: %+v", other)
	}
	id := rcv.Hits()[0].Header.Get("x-hook-id")
	if d.ID != id {
		t.Fatalf("dead id %s, x-hook-id %s", d.ID, id)
	}

	up.Store(true)
	if err := s.Replay("whd_nosuch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replay unknown: %v", err)
	}
	if err := s.Replay(d.ID); err != nil {
		t.Fatal(err)
	}
	if q, dd := s.Depth(); q != 1 || dd != 0 {
		t.Fatalf("after replay: queued %d dead %d", q, dd)
	}
	if err := s.Replay(d.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replay twice: %v", err)
	}
	runDue(t, s)
	hits := rcv.Hits()
	last := hits[len(hits)-1]
	if last.Header.Get("x-hook-id") != id || last.Header.Get("x-hook-attempt") != "1" {
		t.Fatalf("replayed delivery: id %s attempt %s", last.Header.Get("x-hook-id"), last.Header.Get("x-hook-attempt"))
	}
	if q, dd := s.Depth(); q != 0 || dd != 0 || obs.count(OutcomeSuccess) != 1 {
		t.Fatalf("after replayed delivery: queued %d dead %d", q, dd)
	}
}

// TestDeliveryAttemptLimit: with a long period the 185-attempt limit ends it.
func TestDeliveryAttemptLimit(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.Rand = func() float64 { return 0 } // every delay 1 s: far inside 24 h
	s := newService(t, o)
	rcv := newReceiver(t, always(500))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	attempts := 0
	for i := 0; i < 300; i++ {
		attempts += runDue(t, s)
		clock.Advance(time.Second)
	}
	if attempts != 185 || len(rcv.Hits()) != 185 {
		t.Fatalf("%d attempts, want 185", attempts)
	}
	if _, dead := s.Depth(); dead != 1 {
		t.Fatalf("dead %d", dead)
	}
}

// TestDeliveryFailures: a redirect, a time-out and a refused connection are
// failed attempts, recorded in the attempt log.
func TestDeliveryFailures(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.Timeout = 200 * time.Millisecond
	s := newService(t, o)
	target := newReceiver(t, always(200))
	redirect := newReceiver(t, func(int) int { return 307 })
	hang := make(chan struct{})
	slow := newReceiver(t, func(int) int { <-hang; return 200 })
	defer close(hang)
	dead := newReceiver(t, always(200))
	deadURL := dead.URL
	dead.Close()

	redirect.Config.Handler = http.RedirectHandler(target.URL, http.StatusTemporaryRedirect)
	subscribe(t, s, "p1", redirect.URL, EventInboundStatus)
	subscribe(t, s, "p1", slow.URL, EventInboundStatus)
	subscribe(t, s, "p1", deadURL, EventInboundStatus)
	if n, _ := s.Publish("p1", []Event{{EventInboundStatus, "IN-1"}}, nil); n != 3 {
		t.Fatalf("queued %d", n)
	}
	runDue(t, s)
	if len(target.Hits()) != 0 {
		t.Fatal("redirect was followed")
	}
	qs, _ := s.Queued(ListFilter{})
	if len(qs) != 3 {
		t.Fatalf("queued %+v", qs)
	}
	var errs []string
	for _, q := range qs {
		if q.Attempts != 1 || len(q.Log) != 1 {
			t.Fatalf("%+v", q)
		}
		l := q.Log[0]
		errs = append(errs, strconv.Itoa(l.Status)+" "+l.Error)
	}
	all := strings.Join(errs, "|")
	for _, want := range []string{"307 redirect not followed", "0 timeout after 200ms", "refused"} {
		if !strings.Contains(all, want) {
			t.Errorf("attempt log %q lacks %q", all, want)
		}
	}
}

// TestDeliverySSRFAtDialTime: a subscription registered while loopback was
// allowed is refused at delivery once the policy no longer allows it.
func TestDeliverySSRFAtDialTime(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Close()
	o := testOptions(db, clock)
	o.Policy = &netpolicy.Policy{}
	s2 := newService(t, o)
	s2.Publish("p1", []Event{{EventLabelStatus, "L"}}, nil)
	runDue(t, s2)
	qs, _ := s2.Queued(ListFilter{})
	if len(rcv.Hits()) != 0 || len(qs) != 1 || !strings.Contains(qs[0].Log[0].Error, "not allowed") {
		t.Fatalf("hits %d queued %+v", len(rcv.Hits()), qs)
	}
}

// Writes the queue's backend cannot commit fail the whole publish: nothing
// is queued or counted. (That a feed's writes commit with the deliveries is
// the storage contract's, storage/storagetest.)
func TestPublishWithUnusableWritesQueuesNothing(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := newService(t, testOptions(db, newFakeClock()))
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventReceiptReceived)
	n, err := s.Publish("p1", []Event{{EventReceiptReceived, "R1"}}, foreignWrites{})
	if err == nil || n != 0 {
		t.Fatalf("publish with writes of no backend: %d, %v; want an error", n, err)
	}
	if q, _ := s.Depth(); q != 0 {
		t.Fatalf("queued %d after the failed publish, want 0", q)
	}
	if qs, _ := s.Queued(ListFilter{}); len(qs) != 0 {
		t.Fatalf("deliveries written although the publish failed: %+v", qs)
	}
	n, err = s.Publish("p1", []Event{{EventReceiptReceived, "R1"}, {EventReceiptReceived, "R2"}, {EventLabelStatus, "x"}}, nil)
	if err != nil || n != 2 {
		t.Fatalf("publish: %d %v", n, err)
	}
	if _, err := s.Publish("p1", []Event{{"nope", "x"}}, nil); err == nil {
		t.Fatal("unknown event accepted")
	}
	if _, err := s.Publish("", []Event{{EventLabelStatus, "x"}}, nil); err == nil {
		t.Fatal("empty partner accepted")
	}
	runDue(t, s)
	if len(rcv.Hits()) != 2 {
		t.Fatalf("hits %d", len(rcv.Hits()))
	}
}

// TestDeletedSubscriptionDropsDeliveries: deleting a subscription drops its
// queued deliveries when the dispatcher meets them.
func TestDeletedSubscriptionDropsDeliveries(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	obs := newCountingObserver()
	o.Observer = obs
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	keep := subscribe(t, s, "p1", rcv.URL+"/keep", EventOutboundStatus)
	gone := subscribe(t, s, "p1", rcv.URL+"/gone", EventOutboundStatus)
	s.Publish("p1", []Event{{EventOutboundStatus, "O1"}, {EventOutboundStatus, "O2"}}, nil)
	if err := s.Subscriptions().Delete("p1", gone.ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	if q, _ := s.Depth(); q != 0 || obs.count(OutcomeDropped) != 2 || obs.count(OutcomeSuccess) != 2 {
		t.Fatalf("queued %d dropped %d success %d", q, obs.count(OutcomeDropped), obs.count(OutcomeSuccess))
	}
	for _, h := range rcv.Hits() {
		var p Payload
		if !strings.Contains(string(h.Body), `"identifier":"O`) || p != (Payload{}) {
			t.Fatalf("unexpected body %s", h.Body)
		}
	}
	if len(rcv.Hits()) != 2 {
		t.Fatalf("hits %d", len(rcv.Hits()))
	}
	if qs, _ := s.Queued(ListFilter{SubscriptionID: keep.ID}); len(qs) != 0 {
		t.Fatalf("kept subscription still queued: %+v", qs)
	}
}

// slowObserver reports outcomes late, as a busy metrics back end might
// (the Observer contract asks for fast calls; this one breaks it on
// purpose, to widen any window between an outcome and its report).
type slowObserver struct{ *countingObserver }

func (o slowObserver) Delivery(event string, out Outcome) {
	time.Sleep(20 * time.Millisecond)
	o.countingObserver.Delivery(event, out)
}

// threeQueued returns a service (not started) with the test options that
// adjust changes and three deliveries queued to a receiver that accepts
// them.
func threeQueued(t *testing.T, adjust func(*Options)) *Service {
	t.Helper()
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	adjust(&o)
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventOutboundStatus)
	if _, err := s.Publish("p1", []Event{{EventOutboundStatus, "O1"}, {EventOutboundStatus, "O2"}, {EventOutboundStatus, "O3"}}, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// threeQueuedWithSlowObserver is threeQueued with a slow Observer.
func threeQueuedWithSlowObserver(t *testing.T) (*Service, slowObserver) {
	t.Helper()
	obs := slowObserver{newCountingObserver()}
	return threeQueued(t, func(o *Options) { o.Observer = obs }), obs
}

// RunDue returns only once every delivery it dispatched is recorded in the
// queue depth and reported to the Observer (it once returned as soon as
// the last one was committed, before its outcome was counted).
func TestRunDueReturnsAfterOutcomesAreCounted(t *testing.T) {
	s, obs := threeQueuedWithSlowObserver(t)
	runDue(t, s)
	if q, _ := s.Depth(); q != 0 || obs.count(OutcomeSuccess) != 3 {
		t.Fatalf("after RunDue: queued %d, successes reported %d; want 0 and 3", q, obs.count(OutcomeSuccess))
	}
}

// RunDue does not stop while deliveries are due just because the attempt
// slots are still busy: an attempt frees its slot only after its outcome
// is handed over, and here that takes 50 ms, long after the commit. With
// one worker, RunDue once made one attempt of three and returned.
func TestRunDueWaitsForBusySlots(t *testing.T) {
	s := threeQueued(t, func(o *Options) { o.Workers = 1 })
	s.testBeforeRelease = func() { time.Sleep(50 * time.Millisecond) }
	if n := runDue(t, s); n != 3 {
		t.Fatalf("RunDue made %d attempts; want 3", n)
	}
	if q, _ := s.Depth(); q != 0 {
		t.Fatalf("after RunDue: %d queued; want 0", q)
	}
}

// Whoever waits for the queue depth (as the admin depth endpoint's readers
// do) sees the outcomes that made it already reported to the Observer.
func TestDepthChangesAfterOutcomesAreReported(t *testing.T) {
	s, obs := threeQueuedWithSlowObserver(t)
	s.Start()
	deadline := time.Now().Add(10 * time.Second)
	for q, _ := s.Depth(); q != 0; q, _ = s.Depth() {
		if time.Now().After(deadline) {
			t.Fatalf("queue depth still %d after 10 s", q)
		}
		time.Sleep(time.Millisecond)
	}
	if got := obs.count(OutcomeSuccess); got != 3 {
		t.Fatalf("depth 0 with %d successes reported; want 3", got)
	}
}

// TestCrashDurability: deliveries published and then the database closed
// without the dispatcher ever running (as after kill -9) are delivered after
// reopening.
func TestCrashDurability(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventShipmentCreated)
	var ids []string
	for i := 0; i < 50; i++ {
		s.Publish("p1", []Event{{EventShipmentCreated, "S" + strconv.Itoa(i)}}, nil)
	}
	qs, _ := s.Queued(ListFilter{Limit: 100})
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	s.Close()
	db.Close()

	db = openDB(t, dir)
	s2 := newService(t, testOptions(db, clock))
	if q, _ := s2.Depth(); q != 50 {
		t.Fatalf("queued after reopen %d", q)
	}
	s2.Start()
	seen := map[string]bool{}
	timeout := time.After(20 * time.Second)
	for len(seen) < 50 {
		select {
		case h := <-rcv.got:
			seen[h.Header.Get("x-hook-id")] = true
		case <-timeout:
			t.Fatalf("delivered %d of 50 after restart", len(seen))
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("%s not delivered", id)
		}
	}
}

// TestPerTargetCapNoHeadOfLineBlocking: a receiver that never answers holds
// at most PerTargetConcurrency attempts; deliveries to a healthy receiver,
// published after the hanging ones, all arrive meanwhile.
func TestPerTargetCapNoHeadOfLineBlocking(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.Timeout = time.Minute
	o.PerTargetConcurrency = 2
	o.Workers = 8
	s := newService(t, o)
	release := make(chan struct{})
	var inHang, maxHang atomic.Int64
	hang := newReceiver(t, func(int) int {
		n := inHang.Add(1)
		for m := maxHang.Load(); n > m && !maxHang.CompareAndSwap(m, n); m = maxHang.Load() {
		}
		<-release
		inHang.Add(-1)
		return 200
	})
	healthy := newReceiver(t, always(200))
	subscribe(t, s, "p1", hang.URL, EventLabelStatus)
	subscribe(t, s, "p2", healthy.URL, EventLabelStatus)
	for i := 0; i < 20; i++ {
		s.Publish("p1", []Event{{EventLabelStatus, "hang" + strconv.Itoa(i)}}, nil)
	}
	for i := 0; i < 20; i++ {
		s.Publish("p2", []Event{{EventLabelStatus, "ok" + strconv.Itoa(i)}}, nil)
	}
	s.Start()
	timeout := time.After(20 * time.Second)
	for got := 0; got < 20; got++ {
		select {
		case <-healthy.got:
		case <-timeout:
			t.Fatalf("healthy receiver got %d of 20 while the other hung", got)
		}
	}
	if m := maxHang.Load(); m > 2 {
		t.Fatalf("%d concurrent attempts to the hanging target, cap 2", m)
	}
	close(release)
	for got := 0; got < 20; got++ {
		select {
		case <-hang.got:
		case <-timeout:
			t.Fatalf("hanging receiver got %d of 20 after release", got)
		}
	}
}

// TestCloseIsPromptAndKeepsInFlight: Close cancels an attempt that hangs and
// the delivery stays queued for the next start.
func TestCloseIsPromptAndKeepsInFlight(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	o := testOptions(db, newFakeClock())
	o.Timeout = time.Minute
	s := newService(t, o)
	stop := make(chan struct{})
	rcv := newReceiver(t, func(int) int { <-stop; return 200 })
	t.Cleanup(func() { close(stop) }) // runs before the receiver's Close
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L"}}, nil)
	s.Start()
	select {
	case <-rcv.got:
	case <-time.After(20 * time.Second):
		t.Fatal("attempt not made")
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	s2 := newService(t, testOptions(db, newFakeClock()))
	qs, _ := s2.Queued(ListFilter{})
	if len(qs) != 1 || qs[0].Attempts != 0 {
		t.Fatalf("after Close: %+v", qs)
	}
	if _, err := s.Publish("p1", nil, nil); err == nil {
		t.Fatal("Publish after Close accepted")
	}
}

func TestSendTestAndPurge(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxAttempts = 2
	s := newService(t, o)
	rcv := newReceiver(t, always(500))
	sub := subscribe(t, s, "p1", rcv.URL, EventShipmentShipped)
	if _, err := s.SendTest("sub_nosuch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown subscription: %v", err)
	}
	id, err := s.SendTest(sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	clock.Advance(time.Second)
	runDue(t, s)
	h := rcv.Hits()
	if len(h) != 2 || h[0].Header.Get("x-hook-id") != id ||
		string(h[0].Body) != `{"type":"shipment.shipped","resource":"shipment","identifier":"test"}` {
		t.Fatalf("test delivery %d %s", len(h), h[0].Body)
	}
	ds, _ := s.Dead(ListFilter{})
	if len(ds) != 1 || !ds[0].Test {
		t.Fatalf("dead %+v", ds)
	}
	clock.Advance(DefaultDeadRetention - time.Minute)
	if n, _ := s.PurgeDead(); n != 0 {
		t.Fatalf("purged %d before retention", n)
	}
	clock.Advance(2 * time.Minute)
	if n, _ := s.PurgeDead(); n != 1 {
		t.Fatalf("purged %d after retention", n)
	}
	if _, dead := s.Depth(); dead != 0 {
		t.Fatalf("dead %d", dead)
	}
	if ds, _ := s.Dead(ListFilter{}); len(ds) != 0 {
		t.Fatalf("dead after purge %+v", ds)
	}
}

func TestReplaySubscription(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.MaxAttempts = 1
	s := newService(t, o)
	var up atomic.Bool
	rcv := newReceiver(t, func(int) int {
		if up.Load() {
			return 200
		}
		return 500
	})
	a := subscribe(t, s, "p1", rcv.URL+"/a", EventLabelStatus)
	subscribe(t, s, "p1", rcv.URL+"/b", EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "1"}, {EventLabelStatus, "2"}}, nil)
	runDue(t, s)
	since := clock.Now().Add(time.Second)
	clock.Advance(time.Hour)
	s.Publish("p1", []Event{{EventLabelStatus, "3"}}, nil)
	runDue(t, s)
	if _, dead := s.Depth(); dead != 6 {
		t.Fatalf("dead %d", dead)
	}
	up.Store(true)
	n, err := s.ReplaySubscription(a.ID, since)
	if err != nil || n != 1 {
		t.Fatalf("replayed %d %v, want 1 (only the one that died after since)", n, err)
	}
	n, _ = s.ReplaySubscription(a.ID, time.Time{})
	if n != 2 {
		t.Fatalf("replayed %d, want the remaining 2", n)
	}
	runDue(t, s)
	if q, dead := s.Depth(); q != 0 || dead != 3 {
		t.Fatalf("queued %d dead %d", q, dead)
	}
}

// TestCorruptRecordQuarantined: an undecodable queue entry is set aside
// (not retried forever, not blocking the others).
func TestCorruptRecordQuarantined(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	rcv := newReceiver(t, always(200))
	s := newService(t, testOptions(db, clock))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	bad := SchedulePos(clock.Now().Add(-time.Second), "whd_corrupt")
	if err := db.Enqueue([]QueueEntry{{Pos: bad, ID: "whd_corrupt", PartnerID: "p1", Record: []byte("{not json")}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Publish("p1", []Event{{EventLabelStatus, "ok"}}, nil)
	runDue(t, s)
	if len(rcv.Hits()) != 1 {
		t.Fatalf("hits %d, want the one good delivery", len(rcv.Hits()))
	}
	if inSchedule(t, db, bad) {
		t.Fatal("the undecodable entry is still in the schedule, want it set aside")
	}
}

// Dead letters too big to replay 100 to a transaction (long errors in full
// attempt logs) are replayed in smaller transactions, none lost.
func TestReplayBigDeadLetters(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	const count = 150
	var ds []*delivery
	for i := range count {
		d := testDelivery(fmt.Sprintf("whd_big%03d", i), "sub_big", clock.Now())
		fillAttemptLog(d, clock.Now())
		ds = append(ds, d)
	}
	killAll(t, db, ds, clock.Now().Add(time.Hour))
	n, err := s.ReplaySubscription("sub_big", time.Time{})
	if err != nil || n != count {
		t.Fatalf("replayed %d, %v; want %d", n, err, count)
	}
	if ds, _ := s.Dead(ListFilter{}); len(ds) != 0 {
		t.Fatalf("%d dead letters left", len(ds))
	}
	if qs, _ := s.Queued(ListFilter{Limit: 1000}); len(qs) != count {
		t.Fatalf("%d queued, want %d", len(qs), count)
	}
}

// More expired dead letters than fit one purge transaction of the shipped
// settings (2,000 × 2 deletes > about 3,200 entries) are all purged.
func TestPurgeDeadManyExpired(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	const count = 5000
	for i := 0; i < count; i += 500 {
		var ds []*delivery
		for j := i; j < i+500; j++ {
			ds = append(ds, testDelivery(fmt.Sprintf("whd_old%05d", j), "sub_x", clock.Now()))
		}
		killAll(t, db, ds, clock.Now().Add(time.Minute))
	}
	clock.Advance(2 * time.Minute)
	n, err := s.PurgeDead()
	if err != nil || n != count {
		t.Fatalf("purged %d, %v; want %d", n, err, count)
	}
	if ds, _ := s.Dead(ListFilter{Limit: 10000}); len(ds) != 0 {
		t.Fatalf("%d dead letters left", len(ds))
	}
}

// Thousands of undecodable entries (say, written by a newer version) are
// all set aside, in several transactions.
func TestManyCorruptRecordsQuarantined(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	rcv := newReceiver(t, always(200))
	s := newService(t, testOptions(db, clock))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	const count = 2500 // × 2 writes: more than one transaction holds
	bad := make([]QueueEntry, count)
	for i := range bad {
		id := fmt.Sprintf("whd_bad%05d", i)
		bad[i] = QueueEntry{Pos: SchedulePos(clock.Now().Add(-time.Second), id), ID: id, PartnerID: "p1", Record: []byte{0x7f, 1, 2}}
	}
	if err := db.Enqueue(bad, nil); err != nil {
		t.Fatal(err)
	}
	s.Publish("p1", []Event{{EventLabelStatus, "ok"}}, nil)
	runDue(t, s)
	if len(rcv.Hits()) != 1 {
		t.Fatalf("hits %d, want the one good delivery", len(rcv.Hits()))
	}
	if q, _, err := db.Depth(); err != nil || q != 0 {
		t.Fatalf("%d entries left in the schedule (%v), want all %d undecodable ones set aside", q, err, count)
	}
}

// testDelivery is a delivery of partner p1 to subscription sub, created and
// due at now.
func testDelivery(id, sub string, now time.Time) *delivery {
	return &delivery{ID: id, SubscriptionID: sub, PartnerID: "p1", Event: Event{EventLabelStatus, "1"},
		URL: "https://example.com/hook", Created: now, Due: now}
}

// fillAttemptLog gives d a full attempt log of long errors (about 50 KB in
// all), the biggest record the queue writes.
func fillAttemptLog(d *delivery, at time.Time) {
	longErr := strings.Repeat("dial tcp: lookup very-long-host-name.example: no such host; ", 40) // ≈ 2.4 KB
	for a := 1; a <= MaxAttemptLog; a++ {
		d.logAttempt(AttemptRecord{At: at, Attempt: a, Error: longErr})
	}
}
