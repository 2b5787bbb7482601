package webhooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// openBackend opens a real storage backend in dir and returns its
// webhook storage with its close. backend_test.go (package webhooks_test)
// sets it through SetTestBackend: this package's own tests cannot import a
// backend, which imports this package.
var openBackend func(t testing.TB, dir string) (Storage, func() error)

// SetTestBackend sets the backend the tests of this package run on.
func SetTestBackend(open func(t testing.TB, dir string) (Storage, func() error)) { openBackend = open }

// testStore is a backend's storage with its close.
type testStore struct {
	Storage
	close  func() error
	closed bool
	// shared is the storage the services are given: the backend's
	// claiming (Claimer) too when it offers it.
	shared Storage
}

// claimingStore is a testStore whose backend claims (a shared queue).
type claimingStore struct {
	*testStore
	Claimer
}

// storage is what a service on s is given (always the same value).
func (s *testStore) storage() Storage { return s.shared }

// Close closes the backend (once).
func (s *testStore) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.close()
}

// openDB opens the test backend in dir, closed when the test ends.
func openDB(t testing.TB, dir string) *testStore {
	t.Helper()
	st, closeFn := openBackend(t, dir)
	s := &testStore{Storage: st, close: closeFn}
	s.shared = s
	if cl, ok := st.(Claimer); ok {
		s.shared = &claimingStore{testStore: s, Claimer: cl}
	}
	// Registered before any service's cleanup, so it runs after them.
	t.Cleanup(func() { s.Close() })
	return s
}

// fakeClock is a clock the test advances by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var testKey = []byte("partner-webhook-key-0123456789abcdef")

// loopbackPolicy allows 127.0.0.0/8, where the test receivers listen.
func loopbackPolicy() *netpolicy.Policy {
	return &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}}
}

// testOptions are Options for a service on db with a fake clock, a fixed
// "random" 0.5, loopback allowed and plain http allowed.
func testOptions(db *testStore, clock *fakeClock) Options {
	return Options{
		Storage: db.storage(), AllowHTTP: true, Policy: loopbackPolicy(),
		Timeout:    2 * time.Second,
		WebhookKey: func(string) ([]byte, error) { return testKey, nil },
		Clock:      clock.Now, Rand: func() float64 { return 0.5 },
	}
}

func newService(t testing.TB, o Options) *Service {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// hit is one request a receiver saw.
type hit struct {
	Header http.Header
	Body   []byte
}

// receiver is a real HTTP server on 127.0.0.1 recording requests and
// answering with the status status(n) for the n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
	got  chan hit
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	r := &receiver{got: make(chan hit, 10000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		h := hit{Header: req.Header.Clone(), Body: b}
		r.mu.Lock()
		r.hits = append(r.hits, h)
		n := len(r.hits)
		r.mu.Unlock()
		select {
		case r.got <- h:
		default:
		}
		w.WriteHeader(status(n))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) Hits() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func always(code int) func(int) int { return func(int) int { return code } }

// foreignWrites are writes of no backend: every queue refuses them.
type foreignWrites struct{}

func (foreignWrites) Backend() string { return "none" }

// inSchedule reports whether the schedule holds an entry at pos.
func inSchedule(t testing.TB, st Storage, pos []byte) bool {
	t.Helper()
	r, err := st.ReadSchedule()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Seek(pos)
	return r.Valid() && string(r.Pos()) == string(pos)
}

// killAll queues ds and settles them dead, expiring at exp, behind the
// service's back (as a previous process would have).
func killAll(t testing.TB, st Storage, ds []*delivery, exp time.Time) {
	t.Helper()
	entries := make([]QueueEntry, len(ds))
	settle := make([]Settlement, len(ds))
	for i, d := range ds {
		entries[i] = d.entry()
		d.Expires = exp
		settle[i] = Settlement{Pos: entries[i].Pos, Kind: SettleDead, Expires: exp,
			Entry: QueueEntry{ID: d.ID, PartnerID: d.PartnerID, SubscriptionID: d.SubscriptionID, Record: d.marshal()}}
	}
	if err := st.Enqueue(entries, nil); err != nil {
		t.Fatal(err)
	}
	done := make([]bool, len(ds))
	if err := st.Settle(settle, done); err != nil {
		t.Fatal(err)
	}
	for i, ok := range done {
		if !ok {
			t.Fatalf("%s not settled dead", ds[i].ID)
		}
	}
}
