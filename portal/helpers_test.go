package portal_test

import (
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
)

// clock is an injectable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newService opens a service on a real Badger store in a temp dir, with a
// test clock.
func newService(t *testing.T) (*portal.Service, *clock) {
	t.Helper()
	dir := t.TempDir()
	db, err := datadir.Open(dir, datadir.Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	s, err := portal.Open(portal.Options{Store: badgerstore.New(db).Portal(), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

// limits are the sessions' limits in these tests.
var limits = portal.Limits{Idle: 30 * time.Minute, Absolute: 2 * time.Hour}

// signIn creates a link for partner and exchanges it.
func signIn(t *testing.T, s *portal.Service, partner string) portal.NewSession {
	t.Helper()
	l, err := s.CreateLink(partner, 0)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := s.Exchange(l.Token, limits, "127.0.0.1", "test")
	if err != nil {
		t.Fatalf("exchanging a fresh link: %v", err)
	}
	return ns
}
