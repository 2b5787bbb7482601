package tokens

import (
	"encoding/hex"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injectable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 250_000_000, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// openBackend opens a real storage backend's token store in dir and
// returns it with its close. backend_test.go (package tokens_test) sets it
// through SetTestBackend: this package's own tests cannot import a backend,
// which imports this package.
var openBackend func(t testing.TB, dir string) (Store, func() error)

// SetTestBackend sets the backend the tests of this package run on.
func SetTestBackend(open func(t testing.TB, dir string) (Store, func() error)) { openBackend = open }

// testStore is a backend's store with its close.
type testStore struct {
	Store
	close func() error
}

func (s *testStore) Close() error { return s.close() }

// openDB opens the test backend in dir.
func openDB(t testing.TB, dir string) *testStore {
	t.Helper()
	st, closeFn := openBackend(t, dir)
	return &testStore{Store: st, close: closeFn}
}

// closeStore closes the store of s (a restart follows).
func closeStore(s *Service) { s.store.(*testStore).Close() }

// newTestService opens a service on a fresh Badger dir with a fake clock
// and cfg applied.
func newTestService(t testing.TB, cfg Config) (*Service, *fakeClock, string) {
	t.Helper()
	dir := t.TempDir()
	db := openDB(t, dir)
	t.Cleanup(func() { db.Close() })
	clk := newFakeClock()
	s, err := Open(Options{Store: db, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	return s, clk, dir
}

const (
	acmeSecret   = "acme-demo-secret-90GxaJp_Nsj4T7XS9YzEzicbSoBGNTDdVSjBw4WOrI8"
	globexSecret = "globex-demo-secret-6AaqqZxFffGJLYblV6iKjvZ9wj21ddIBEe4JsJhewvM"
)

func demoPartners() []StaticPartner {
	return []StaticPartner{
		{ID: "partner-acme", Consolidation: true, WebhookKey: "acme-webhook-key-0123456789abcdefghijkl",
			Clients: []StaticClient{{ID: "acme-client", Secret: acmeSecret}}},
		{ID: "partner-globex", WebhookKey: "globex-webhook-key-0123456789abcdefghijk",
			Clients: []StaticClient{{ID: "globex-client", Secret: globexSecret}}},
	}
}

// mustToken authenticates and gets a token.
func mustToken(t testing.TB, s *Service, id, secret string) Token {
	t.Helper()
	c, ok := s.Authenticate(id, secret)
	if !ok {
		t.Fatalf("client %s did not authenticate", id)
	}
	tok, err := s.Token(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func hexSHA(s string) string {
	d := secretDigest(s)
	return hex.EncodeToString(d[:])
}

// fakeRand is a deterministic randomness source for reproducible keys.
type fakeRand struct{ n byte }

func newFakeRand() *fakeRand { return &fakeRand{} }

func (r *fakeRand) Read(p []byte) (int, error) {
	for i := range p {
		r.n++
		p[i] = r.n*31 + 7
	}
	return len(p), nil
}
