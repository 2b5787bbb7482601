package webhooks

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

func reconfigure(t *testing.T, s *Service, o Options) {
	t.Helper()
	if err := s.Reconfigure(o); err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
}

// TestReconfigureHeaders: a new user agent and the Standard Webhooks
// headers appear on the next attempt.
func TestReconfigureHeaders(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventShipmentShipped)

	s.Publish("p1", []Event{{EventShipmentShipped, "S1"}}, nil)
	runDue(t, s)
	o.UserAgent, o.StandardWebhooks = "Changed/2", true
	reconfigure(t, s, o)
	s.Publish("p1", []Event{{EventShipmentShipped, "S2"}}, nil)
	runDue(t, s)

	hits := rcv.Hits()
	if len(hits) != 2 {
		t.Fatalf("%d hits", len(hits))
	}
	if ua := hits[0].Header.Get("User-Agent"); ua != DefaultUserAgent || hits[0].Header.Get("webhook-id") != "" {
		t.Fatalf("before: UA %q, webhook-id %q", ua, hits[0].Header.Get("webhook-id"))
	}
	h := hits[1].Header
	if h.Get("User-Agent") != "Changed/2" {
		t.Fatalf("after: UA %q", h.Get("User-Agent"))
	}
	ts, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	id := h.Get("webhook-id")
	if id == "" || id != h.Get("x-hook-id") || ts != clock.Now().Unix() ||
		h.Get("webhook-signature") != StandardSignature(testKey, id, ts, hits[1].Body) {
		t.Fatalf("after: Standard Webhooks headers %v", h)
	}
	if got := s.Settings(); got.UserAgent != "Changed/2" || !got.StandardWebhooks {
		t.Fatalf("Settings %+v", got)
	}
}

// TestReconfigureMaxAttempts: a failing delivery goes dead at the new,
// lower limit; an attempt in flight during Reconfigure decides its outcome
// with the settings it started with.
func TestReconfigureMaxAttempts(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.Rand = func() float64 { return 0 } // every delay 1 s
	s := newService(t, o)
	inHandler, release := make(chan struct{}), make(chan struct{})
	rcv := newReceiver(t, func(n int) int {
		if n == 4 { // hold the 4th attempt while the settings change
			inHandler <- struct{}{}
			<-release
		}
		return 500
	})
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	for range 3 {
		runDue(t, s)
		clock.Advance(time.Second)
	}
	done := make(chan int)
	go func() { n, _ := s.RunDue(context.Background()); done <- n }()
	<-inHandler
	o.MaxAttempts = 4 // the attempt in flight is the 4th: under the old limit it is retried
	reconfigure(t, s, o)
	close(release)
	<-done
	if q, d := s.Depth(); q != 1 || d != 0 {
		t.Fatalf("after the in-flight attempt: queued %d dead %d", q, d)
	}
	clock.Advance(time.Second)
	runDue(t, s) // the 5th attempt is past the new limit: dead
	if q, d := s.Depth(); q != 0 || d != 1 || len(rcv.Hits()) != 5 {
		t.Fatalf("queued %d dead %d hits %d", q, d, len(rcv.Hits()))
	}
	if rp := s.RetryPolicy(); rp.MaxAttempts != 4 {
		t.Fatalf("RetryPolicy %+v", rp)
	}

	// A lower limit than the attempts already made: the next failure ends it.
	s.Publish("p1", []Event{{EventLabelStatus, "L2"}}, nil)
	for range 3 {
		runDue(t, s)
		clock.Advance(time.Second)
	}
	o.MaxAttempts = 2
	reconfigure(t, s, o)
	runDue(t, s)
	dead, _ := s.Dead(ListFilter{})
	got := map[string]int{}
	for _, d := range dead {
		got[d.Identifier] = d.Attempts
	}
	if len(dead) != 2 || got["L1"] != 5 || got["L2"] != 4 {
		t.Fatalf("dead attempts %v", got)
	}
}

// TestReconfigurePolicy: removing 127.0.0.0/8 refuses the next dial (even
// with a kept-alive connection to the receiver) and registration; adding it
// back allows both.
func TestReconfigurePolicy(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	runDue(t, s) // leaves an idle keep-alive connection

	closed := o
	closed.Policy = &netpolicy.Policy{}
	reconfigure(t, s, closed)
	s.Publish("p1", []Event{{EventLabelStatus, "L2"}}, nil)
	runDue(t, s)
	qs, _ := s.Queued(ListFilter{})
	if len(rcv.Hits()) != 1 || len(qs) != 1 || !strings.Contains(qs[0].Log[0].Error, "not allowed") {
		t.Fatalf("hits %d queued %+v", len(rcv.Hits()), qs)
	}
	_, _, err := s.Subscriptions().Create(context.Background(), "p1", rcv.URL+"/new", EventLabelStatus)
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Reason, "not allowed") {
		t.Fatalf("registration under the closed policy: %v", err)
	}

	open := loopbackPolicy()
	o.Policy = open
	reconfigure(t, s, o)
	open.Allow = nil // the caller's later edits do not reach the service
	clock.Advance(2 * time.Second)
	runDue(t, s)
	if q, _ := s.Depth(); len(rcv.Hits()) != 2 || q != 0 {
		t.Fatalf("after reopening: hits %d queued %d", len(rcv.Hits()), q)
	}
	subscribe(t, s, "p1", rcv.URL+"/new", EventLabelStatus)
	if p := s.Settings().Policy; !p.Equal(loopbackPolicy()) {
		t.Fatalf("policy %+v", p)
	}
}

// TestReconfigureSubscriptionLimit: a lower limit refuses the next
// subscription with ErrLimit; existing ones stay.
func TestReconfigureSubscriptionLimit(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	for i := range 3 {
		subscribe(t, s, "p1", rcv.URL+"/"+strconv.Itoa(i), EventLabelStatus)
	}
	o.MaxSubscriptionsPerPartner = 3
	reconfigure(t, s, o)
	if _, _, err := s.Subscriptions().Create(context.Background(), "p1", rcv.URL+"/x", EventLabelStatus); !errors.Is(err, ErrLimit) {
		t.Fatalf("over the new limit: %v", err)
	}
	if l, _ := s.Subscriptions().List("p1"); len(l) != 3 {
		t.Fatalf("%d subscriptions", len(l))
	}
	subscribe(t, s, "p2", rcv.URL+"/x", EventLabelStatus) // the limit is per partner
	o.MaxSubscriptionsPerPartner = 4
	reconfigure(t, s, o)
	subscribe(t, s, "p1", rcv.URL+"/x", EventLabelStatus)
}

// TestReconfigureInvalidKeepsSettings: invalid options are refused and the
// settings in force stay.
func TestReconfigureInvalidKeepsSettings(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.UserAgent, o.MaxAttempts = "Old/1", 7
	s := newService(t, o)
	other := openDB(t, t.TempDir())
	for name, bad := range map[string]func(*Options){
		"no Storage":      func(x *Options) { x.Storage = nil },
		"another Storage": func(x *Options) { x.Storage = other },
		"no WebhookKey":   func(x *Options) { x.WebhookKey = nil },
		"UA newline":      func(x *Options) { x.UserAgent = "New/1\r\nX-Evil: 1" },
	} {
		x := o
		x.UserAgent, x.MaxAttempts = "New/1", 2
		bad(&x)
		if err := s.Reconfigure(x); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(Options{Storage: db, WebhookKey: o.WebhookKey, UserAgent: "a\nb"}); err == nil {
		t.Error("New accepted a user agent with a newline")
	}
	if got := s.Settings(); got.UserAgent != "Old/1" || got.MaxAttempts != 7 || s.RetryPolicy().MaxAttempts != 7 {
		t.Fatalf("settings changed: UA %q max %d", got.UserAgent, got.MaxAttempts)
	}
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	runDue(t, s)
	if h := rcv.Hits(); len(h) != 1 || h[0].Header.Get("User-Agent") != "Old/1" {
		t.Fatalf("hits %+v", h)
	}
}

// TestReconfigureConcurrent: Reconfigure runs over and over while the real
// dispatcher delivers and partners subscribe (run it with -race). Every
// event is delivered once, with one of the two user agents.
func TestReconfigureConcurrent(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock()) // the clock stands still: nothing is retried
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL, EventLabelStatus)
	s.Start()

	const events = 200
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var applied atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			x := o
			x.UserAgent = []string{"A/1", "B/1"}[i%2]
			x.StandardWebhooks = i%2 == 0
			x.Workers, x.PerTargetConcurrency = 1+i%8, 1+i%3
			x.MaxAttempts, x.MaxSubscriptionsPerPartner = 10+i%5, 50+i%5
			if err := s.Reconfigure(x); err != nil {
				t.Error(err)
				return
			}
			applied.Add(1)
			_ = s.Settings()
			time.Sleep(200 * time.Microsecond) // leave the 2 CPUs to the deliveries
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 20 {
			if _, _, err := s.Subscriptions().Create(context.Background(), "p2", rcv.URL+"/"+strconv.Itoa(i), EventLabelStatus); err != nil {
				t.Error(err)
			}
		}
	}()
	for i := range events {
		if _, err := s.Publish("p1", []Event{{EventLabelStatus, "L" + strconv.Itoa(i)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	guard := time.After(60 * time.Second) // a hang guard, not a timing assertion
	for len(seen) < events {
		select {
		case h := <-rcv.got:
			if ua := h.Header.Get("User-Agent"); ua != "A/1" && ua != "B/1" && ua != DefaultUserAgent {
				t.Fatalf("user agent %q", ua)
			}
			seen[h.Header.Get("x-hook-id")] = true
		case <-guard:
			t.Fatalf("%d of %d delivered", len(seen), events)
		}
	}
	close(stop)
	wg.Wait()
	if applied.Load() == 0 {
		t.Fatal("no Reconfigure ran")
	}
	if len(rcv.Hits()) != events {
		t.Fatalf("%d hits for %d events", len(rcv.Hits()), events)
	}
}

// TestReconfigureKeepsClient: the built client (and its keep-alive
// connections) is kept unless the policy or the per-target cap change; a
// caller's HTTPClient is used as it is.
func TestReconfigureKeepsClient(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	s := newService(t, o)
	c0 := s.cur().client
	o.UserAgent, o.Timeout = "X/1", time.Second
	reconfigure(t, s, o)
	if s.cur().client != c0 {
		t.Fatal("client rebuilt although policy and per-target cap are unchanged")
	}
	o.PerTargetConcurrency = 9
	reconfigure(t, s, o)
	c1 := s.cur().client
	if c1 == c0 {
		t.Fatal("client kept although the per-target cap changed")
	}
	o.Policy = &netpolicy.Policy{Allow: append(loopbackPolicy().Allow, netpolicy.AllowRule{Networks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})}
	reconfigure(t, s, o)
	if s.cur().client == c1 {
		t.Fatal("client kept although the policy changed")
	}
	mine := &http.Client{}
	o.HTTPClient = mine
	reconfigure(t, s, o)
	if s.cur().client != mine {
		t.Fatal("the caller's client is not used")
	}
}

// Turning AllowHTTP off stops deliveries to existing http:// subscriptions
// at their next attempt: the attempt is refused before any connection, it
// is a failed attempt whose log says why (the delivery stays queued and is
// retried, never silently dropped), and turning AllowHTTP on again lets the
// retry through.
func TestReconfigureAllowHTTPOffRefusesHTTPAttempts(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	obs := newCountingObserver()
	o.Observer = obs
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "p1", rcv.URL+"/plain", EventLabelStatus)

	httpsOnly := o
	httpsOnly.AllowHTTP = false
	reconfigure(t, s, httpsOnly)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	if n := runDue(t, s); n != 1 {
		t.Fatalf("%d attempts, want 1 (refused, but an attempt)", n)
	}
	if hits := len(rcv.Hits()); hits != 0 {
		t.Fatalf("the receiver got %d requests over plain http after allow_http was turned off, want 0", hits)
	}
	qs, _ := s.Queued(ListFilter{})
	if len(qs) != 1 || qs[0].Attempts != 1 || len(qs[0].Log) != 1 {
		t.Fatalf("queued %+v, want the delivery kept with one failed attempt", qs)
	}
	if e := qs[0].Log[0].Error; !strings.Contains(e, "refused") || !strings.Contains(e, "http") {
		t.Fatalf("attempt log error %q, want a refusal that names plain http", e)
	}
	if obs.count(OutcomeFailure) != 1 || obs.count(OutcomeDropped) != 0 {
		t.Fatalf("outcomes: %d failures, %d dropped; want one failure", obs.count(OutcomeFailure), obs.count(OutcomeDropped))
	}

	reconfigure(t, s, o)
	clock.Advance(s.RetryPolicy().Ceiling(1))
	runDue(t, s)
	if q, _ := s.Depth(); len(rcv.Hits()) != 1 || q != 0 {
		t.Fatalf("after allowing http again: %d requests, %d queued; want the retry delivered", len(rcv.Hits()), q)
	}
}
