package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
	"github.com/fulfilgate/fulfilgate/wmssim"
)

// The partner of the simulated warehouse's changes, and its subscription.
const (
	partner   = "partner-acme"
	hookURL   = "http://127.0.0.1:9/hooks" // never dialled: no dispatcher runs
	readerHdr = "X-Test-Reader"
)

// warehouse is the WMS simulator on a loopback server. Every feed request
// is counted per reader (the readerHdr header).
type warehouse struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests map[string]int
}

var warehouses atomic.Int64

func newWarehouse(t *testing.T) *warehouse {
	t.Helper()
	no := false
	h := &wmssim.Handler{Name: fmt.Sprintf("lease-%d", warehouses.Add(1)), Seed: &no}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Cleanup() })
	w := &warehouse{t: t, requests: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if reader := r.Header.Get(readerHdr); reader != "" {
			w.mu.Lock()
			w.requests[reader]++
			w.mu.Unlock()
		}
		if err := h.ServeHTTP(rw, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })); err != nil {
			t.Errorf("the simulator: %v", err)
		}
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// outbounds creates n outbounds of partner: n changes on the feed.
func (w *warehouse) outbounds(n int) {
	w.t.Helper()
	for range n {
		resp, err := http.Post(w.srv.URL+"/wms/_control/outbounds", "application/json", strings.NewReader(`{"partner":"`+partner+`"}`))
		if err != nil {
			w.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			w.t.Fatalf("creating an outbound: status %d, want 201", resp.StatusCode)
		}
	}
}

// requestsOf is how many feed requests reader made.
func (w *warehouse) requestsOf(reader string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests[reader]
}

// instance is one gateway instance's part in the feed: its stores on a
// pool of its own, its webhook service and its feed reader (not started:
// the test polls), which publishes through pub.
type instance struct {
	name  string
	pool  *pgxpool.Pool
	store *pgstore.Store
	hooks *webhooks.Service
	pub   *pausingPublisher
	feed  *feed.Feed
}

// pausingPublisher is the webhook service as the reader's publisher, which
// the test can pause: a paused publish waits, after the reader has looked
// up which changes are done and before it queues the events and stores
// its cursor (a process paused mid-page).
type pausingPublisher struct {
	*webhooks.Service
	mu      sync.Mutex
	gate    chan struct{}
	arrived chan struct{}
}

func (p *pausingPublisher) PublishKeyed(partnerID string, events []webhooks.Event, keys []string, with webhooks.TxWrites) (int, error) {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	if gate != nil {
		p.arrived <- struct{}{}
		<-gate
	}
	return p.Service.PublishKeyed(partnerID, events, keys, with)
}

// pause makes the next publishes wait; arrived receives when one does,
// and release lets them go on.
func (p *pausingPublisher) pause(t *testing.T) (arrived <-chan struct{}, release func()) {
	gate := make(chan struct{})
	p.mu.Lock()
	p.gate, p.arrived = gate, make(chan struct{}, 8)
	arrived = p.arrived
	p.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			p.mu.Lock()
			p.gate = nil
			p.mu.Unlock()
			close(gate)
		})
	}
	t.Cleanup(release)
	return arrived, release
}

// newInstance opens instance name on dsn, reading the warehouse's feed
// with the clock now; page is the page size asked for.
func newInstance(t *testing.T, name, dsn string, w *warehouse, now func() time.Time, page int) *instance {
	t.Helper()
	i := pgstore.OpenTestInstance(t, dsn, func(o *webhooks.Options) { o.Clock = now })
	if _, _, err := i.Hooks.Subscriptions().Create(context.Background(), partner, hookURL, webhooks.EventOutboundStatus); err != nil {
		t.Fatal(err)
	}
	pub := &pausingPublisher{Service: i.Hooks}
	f, err := feed.New(feed.Options{Name: "wms", Store: i.Store.Feed("wms"), Clock: now},
		feed.Settings{Publisher: pub, Partners: knownPartner,
			Poll: feed.PollConfig{URL: w.srv.URL + "/wms/changes", PageSize: page, Header: http.Header{readerHdr: {name}}, Interval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &instance{name: name, pool: i.Pool, store: i.Store, hooks: i.Hooks, pub: pub, feed: f}
}

// knownPartner is the gateway's partners: partner only, not a
// consolidation partner.
func knownPartner(id string) (consolidation, ok bool, err error) { return false, id == partner, nil }

// queuedIDs counts the queued deliveries per id (x-hook-id), through a
// pool of its own on dsn.
func queuedIDs(t *testing.T, dsn string) map[string]int {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, err := pool.Query(context.Background(), "SELECT id, count(*) FROM deliveries GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eachOnce fails t unless ids holds want ids, each queued once.
func eachOnce(t *testing.T, ids map[string]int, want int, why string) {
	t.Helper()
	for id, n := range ids {
		if n != 1 {
			t.Errorf("delivery %s is queued %d times, want once: %s", id, n, why)
		}
	}
	if len(ids) != want {
		t.Errorf("%d deliveries queued, want %d (one per change): %s", len(ids), want, why)
	}
}

// pollUntilCaughtUp polls i until a poll finds nothing more to read (at
// most limit polls).
func pollUntilCaughtUp(t *testing.T, i *instance, limit int) {
	t.Helper()
	for range limit {
		if wait := i.feed.Poll(context.Background()); wait != 0 {
			if st := i.feed.Status(); st.LastError != "" {
				t.Fatalf("%s's poll failed: %s", i.name, st.LastError)
			}
			return
		}
	}
	t.Fatalf("%s did not catch up in %d polls", i.name, limit)
}
