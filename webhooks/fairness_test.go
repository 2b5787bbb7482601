package webhooks

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tarpit is a receiver that accepts requests and answers none until the
// test releases it; it counts the requests it holds.
type tarpit struct {
	*httptest.Server
	inside atomic.Int64
}

// newTarpits starts n tarpits on 127.0.0.1 (each its own port: its own
// target) released together when the test ends, before they close.
func newTarpits(t *testing.T, n int, held *atomic.Int64, maxHeld *atomic.Int64) []*tarpit {
	t.Helper()
	release := make(chan struct{})
	out := make([]*tarpit, n)
	for i := range out {
		tp := &tarpit{}
		tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tp.inside.Add(1)
			now := held.Add(1)
			for m := maxHeld.Load(); now > m && !maxHeld.CompareAndSwap(m, now); m = maxHeld.Load() {
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			held.Add(-1)
		}))
		t.Cleanup(tp.Close)
		out[i] = tp
	}
	t.Cleanup(func() { close(release) }) // runs before the servers' Close
	return out
}

// One partner's 100 subscriptions pointing at 20 receivers that never
// answer take at most that partner's share of the workers: another
// partner's deliveries, published after them, all arrive while every one
// of the first partner's attempts is still hanging.
func TestHangingPartnerDoesNotDelayOthers(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.Timeout = time.Hour // the tarpits hold their attempts for the whole test
	o.Workers = 8
	o.PerPartnerConcurrency = 4
	o.MaxSubscriptionsPerPartner = 200
	s := newService(t, o)
	var held, maxHeld atomic.Int64
	for i, tp := range newTarpits(t, 20, &held, &maxHeld) {
		for j := range 5 {
			subscribe(t, s, "dead-receivers", tp.URL+"/"+strconv.Itoa(i*5+j), EventLabelStatus)
		}
	}
	healthy := newReceiver(t, always(200))
	subscribe(t, s, "healthy", healthy.URL, EventLabelStatus)
	if n, err := s.Publish("dead-receivers", []Event{{EventLabelStatus, "L1"}, {EventLabelStatus, "L2"}}, nil); err != nil || n != 200 {
		t.Fatalf("publish: %d %v", n, err)
	}
	for i := range 10 {
		s.Publish("healthy", []Event{{EventLabelStatus, "H" + strconv.Itoa(i)}}, nil)
	}
	s.Start()
	timeout := time.After(20 * time.Second)
	for got := 0; got < 10; got++ {
		select {
		case <-healthy.got:
		case <-timeout:
			t.Fatalf("the healthy partner got %d of 10 deliveries while the other partner's receivers hung "+
				"(%d attempts held); want all 10", got, held.Load())
		}
	}
	if h := held.Load(); h == 0 {
		t.Fatal("no attempt of the hanging partner was in flight: the test proves nothing")
	}
	if m := maxHeld.Load(); m > 4 {
		t.Fatalf("%d attempts of one partner in flight at once, cap 4", m)
	}
}

// order records the partner of each request a receiver gets, in order.
type order struct {
	mu  sync.Mutex
	who []string
}

func (o *order) receiver(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.who = append(o.who, r.URL.Path[1:])
		o.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// With one worker, partners with due deliveries take turns: three partners
// whose deliveries were published one partner after the other are served
// a, b, c, a, b, c, ... rather than in publication order.
func TestWorkersSharedRoundRobinBetweenPartners(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.Workers = 1
	s := newService(t, o)
	var got order
	rcv := got.receiver(t)
	for _, p := range []string{"a", "b", "c"} {
		subscribe(t, s, p, rcv.URL+"/"+p, EventLabelStatus)
	}
	for _, p := range []string{"a", "b", "c"} {
		for i := range 4 {
			s.Publish(p, []Event{{EventLabelStatus, p + strconv.Itoa(i)}}, nil)
			clock.Advance(time.Second) // due one after the other: a's four first
		}
	}
	if n := runDue(t, s); n != 12 {
		t.Fatalf("%d attempts, want 12", n)
	}
	want := "abcabcabcabc"
	var seen string
	for _, w := range got.who {
		seen += w
	}
	if seen != want {
		t.Fatalf("served in the order %q, want the partners in turn %q", seen, want)
	}
}

// A partner never has more attempts in flight than PerPartnerConcurrency,
// however many targets it has; the default is a quarter of the workers.
func TestPerPartnerCap(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	o.Timeout = time.Hour
	o.Workers = 12
	o.PerPartnerConcurrency = 3
	o.MaxSubscriptionsPerPartner = 200
	s := newService(t, o)
	if got := s.Settings().PerPartnerConcurrency; got != 3 {
		t.Fatalf("PerPartnerConcurrency %d, want 3", got)
	}
	var held, maxHeld atomic.Int64
	for i, tp := range newTarpits(t, 10, &held, &maxHeld) {
		subscribe(t, s, "p1", tp.URL+"/"+strconv.Itoa(i), EventLabelStatus)
	}
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)
	s.Start()
	deadline := time.Now().Add(20 * time.Second)
	for held.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts in flight after 20 s, want 3", held.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Wake the dispatcher a few times: nothing more may start.
	for range 5 {
		s.sched.poke()
		time.Sleep(20 * time.Millisecond)
	}
	if m := maxHeld.Load(); m != 3 {
		t.Fatalf("%d attempts of one partner in flight at once, want the cap 3", m)
	}

	d := openDB(t, t.TempDir())
	def := newService(t, testOptions(d, newFakeClock())).Settings()
	if def.PerPartnerConcurrency != DefaultWorkers/4 {
		t.Fatalf("default PerPartnerConcurrency %d, want a quarter of %d workers", def.PerPartnerConcurrency, DefaultWorkers)
	}
}

// A partner's backlog larger than its share of the ready queue is all
// delivered (what did not fit is read again as the queue drains), and a
// partner whose single delivery is due after the whole backlog is served
// second, not after it.
func TestBacklogBeyondTheReadyQueue(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	o.Workers = 1
	s := newService(t, o)
	var got order
	rcv := got.receiver(t)
	subscribe(t, s, "big", rcv.URL+"/big", EventLabelStatus)
	subscribe(t, s, "small", rcv.URL+"/small", EventLabelStatus)
	const backlog = 3*maxReadyPerPartner + 10
	events := make([]Event, backlog)
	for i := range events {
		events[i] = Event{EventLabelStatus, "B" + strconv.Itoa(i)}
	}
	if n, err := s.Publish("big", events, nil); err != nil || n != backlog {
		t.Fatalf("publish: %d %v", n, err)
	}
	clock.Advance(time.Second)
	s.Publish("small", []Event{{EventLabelStatus, "S"}}, nil)
	if n := runDue(t, s); n != backlog+1 {
		t.Fatalf("%d attempts, want %d", n, backlog+1)
	}
	if q, _ := s.Depth(); q != 0 {
		t.Fatalf("%d still queued, want 0", q)
	}
	if len(got.who) != backlog+1 || got.who[1] != "small" {
		t.Fatalf("%d requests, the second from %q; want %d, the second from the small partner", len(got.who), got.who[1], backlog+1)
	}
}
