package pgstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// The tests of shared_queue_test.go run webhook services of several
// gateway instances in one process, each on a pool of its own, on one
// database, with a real receiver on 127.0.0.1.

// gateway is one instance: its webhook service on its own pool.
type gateway struct {
	name string
	svc  *webhooks.Service
	pool *pgxpool.Pool
	obs  *outcomes
}

// newGateway starts instance name's webhook service on dsn (not its
// dispatcher: Start or RunDue); its attempts carry the User-Agent name.
// The service is closed, then its pool, when t ends.
func newGateway(t *testing.T, dsn, name string, clock *TestClock, tune func(*webhooks.Options)) *gateway {
	t.Helper()
	g := &gateway{name: name, obs: newOutcomes()}
	i := OpenTestInstance(t, dsn, func(o *webhooks.Options) {
		o.UserAgent, o.Timeout = name, 5*time.Second
		o.Clock, o.Rand, o.Observer = clock.Now, func() float64 { return 0.5 }, g.obs
		if tune != nil {
			tune(o)
		}
	})
	g.svc, g.pool = i.Hooks, i.Pool
	return g
}

// kill stops g as a crash would, as far as the database can tell: its
// connections are closed first, so it neither records outcomes nor
// releases its claims (they stay leased until the lease runs out).
func (g *gateway) kill() {
	g.pool.Close()
	g.svc.Close()
}

func (g *gateway) subscribe(t *testing.T, partner, url string) webhooks.Subscription {
	t.Helper()
	sub, _, err := g.svc.Subscriptions().Create(context.Background(), partner, url, webhooks.EventLabelStatus)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func (g *gateway) publish(t *testing.T, partner string, identifiers ...string) {
	t.Helper()
	evs := make([]webhooks.Event, len(identifiers))
	for i, id := range identifiers {
		evs[i] = webhooks.Event{Name: webhooks.EventLabelStatus, Identifier: id}
	}
	if _, err := g.svc.Publish(partner, evs, nil); err != nil {
		t.Fatal(err)
	}
}

// runDue runs g's dispatcher over what is due now and returns the
// attempts it made.
func (g *gateway) runDue(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := g.svc.RunDue(ctx)
	if err != nil {
		t.Fatalf("%s's RunDue: %v", g.name, err)
	}
	return n
}

// depth is the queue's depth as g counts it in the database.
func (g *gateway) depth(t *testing.T) (queued, dead int64) {
	t.Helper()
	q, d, err := g.svc.CurrentDepth()
	if err != nil {
		t.Fatalf("%s's CurrentDepth: %v", g.name, err)
	}
	return q, d
}

// outcomes records a service's delivery outcomes (webhooks.Observer).
type outcomes struct {
	mu   sync.Mutex
	n    map[webhooks.Outcome]int
	seen chan webhooks.Outcome
}

func newOutcomes() *outcomes {
	return &outcomes{n: map[webhooks.Outcome]int{}, seen: make(chan webhooks.Outcome, 10000)}
}

func (o *outcomes) Delivery(_ string, out webhooks.Outcome) {
	o.mu.Lock()
	o.n[out]++
	o.mu.Unlock()
	select {
	case o.seen <- out:
	default:
	}
}

// count is how many outcomes out were recorded.
func (o *outcomes) count(out webhooks.Outcome) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[out]
}

func (o *outcomes) Attempt(time.Duration, int) {}
func (o *outcomes) Depth(int64, int64)         {}

// arrival is one request a receiver got.
type arrival struct {
	id, from string // x-hook-id, User-Agent (the instance)
}

// receiver is a webhook receiver on 127.0.0.1 that records each request's
// x-hook-id and instance, and answers with answer(instance) (which may
// block).
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []arrival
	in  chan arrival
}

func newSharedReceiver(t *testing.T, answer func(from string) int) *receiver {
	t.Helper()
	r := &receiver{in: make(chan arrival, 10000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		a := arrival{id: req.Header.Get("x-hook-id"), from: req.Header.Get("User-Agent")}
		r.mu.Lock()
		r.got = append(r.got, a)
		r.mu.Unlock()
		select {
		case r.in <- a:
		default:
		}
		w.WriteHeader(answer(a.from))
	}))
	t.Cleanup(r.Close)
	return r
}

// arrivals returns the requests so far.
func (r *receiver) arrivals() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.got...)
}

// perID counts the requests of each x-hook-id from instance from ("" any).
func (r *receiver) perID(from string) map[string]int {
	out := map[string]int{}
	for _, a := range r.arrivals() {
		if from == "" || a.from == from {
			out[a.id]++
		}
	}
	return out
}

// within bounds how long a test waits for something that must happen: a
// bound on a hang, not a measure of speed.
const within = 60 * time.Second

// await receives n arrivals from r, failing t after within.
func (r *receiver) await(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.After(within)
	for i := 0; i < n; i++ {
		select {
		case <-r.in:
		case <-deadline:
			t.Fatalf("%s: %d of %d requests arrived within %s", what, i, n, within)
		}
	}
}

// awaitFrom receives n arrivals from r, all from instance from: an
// arrival from another instance fails t, as does waiting longer than
// within.
func (r *receiver) awaitFrom(t *testing.T, from string, n int, what string) {
	t.Helper()
	deadline := time.After(within)
	for i := 0; i < n; i++ {
		select {
		case a := <-r.in:
			if a.from != from {
				t.Fatalf("%s: a request from %s (%s) arrived, want only %s's", what, a.from, a.id, from)
			}
		case <-deadline:
			t.Fatalf("%s: %d of %d requests from %s arrived within %s", what, i, n, from, within)
		}
	}
}

// takesOverAfterLease checks that b attempts none of the five deliveries
// the dead instance (named holder) held while their leases hold, and
// each exactly once after clock passed lease.
func (b *gateway) takesOverAfterLease(t *testing.T, rcv *receiver, clock *TestClock, lease time.Duration, holder string) {
	t.Helper()
	if n := b.runDue(t); n != 0 {
		t.Fatalf("B made %d attempts while %s leases held, want none", n, holder)
	}
	clock.Advance(lease)
	if n := b.runDue(t); n != 5 {
		t.Fatalf("B made %d attempts after %s leases ran out, want the five deliveries it held", n, holder)
	}
	for id, n := range rcv.perID("B") {
		if n != 1 {
			t.Errorf("B attempted %s %d times, want once", id, n)
		}
	}
	if got := len(rcv.perID("B")); got != 5 {
		t.Errorf("B delivered %d distinct deliveries, want 5", got)
	}
	if q, d := b.depth(t); q != 0 || d != 0 {
		t.Errorf("after B's deliveries: %d queued, %d dead; want none", q, d)
	}
}
