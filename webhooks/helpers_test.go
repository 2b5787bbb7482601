package webhooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
)

// openDB opens a real Badger in dir with the app's settings (synced writes).
func openDB(t testing.TB, dir string) *badger.DB {
	t.Helper()
	db, err := badger.Open(datadir.Options(dir, nil)) // the gateway's own settings
	if err != nil {
		t.Fatal(err)
	}
	// Registered before any service's cleanup, so it runs after them.
	t.Cleanup(func() {
		if !db.IsClosed() {
			db.Close()
		}
	})
	return db
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
func loopbackPolicy() *NetPolicy {
	return &NetPolicy{Allow: []AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}}
}

// testOptions are Options for a service on db with a fake clock, a fixed
// "random" 0.5, loopback allowed and plain http allowed.
func testOptions(db *badger.DB, clock *fakeClock) Options {
	return Options{
		DB: db, AllowHTTP: true, Policy: loopbackPolicy(),
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
