package pgstore

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// The setup the tests of several gateway instances on one database share
// (the shared-queue tests here, the feed-reader tests of package
// pgstore_test): a migrated database, the instances' clock, and each
// instance's store and webhook service on a pool of its own.

// MigratedDatabase is the DSN of a fresh, migrated database.
func MigratedDatabase(t *testing.T) string {
	t.Helper()
	return migratedPool(t).Config().ConnString()
}

// TestClock is the instances' clock, advanced by hand. Claims, leases and
// cursors are in its time; the instances' timers are real.
type TestClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewTestClock is a clock that reads now until advanced.
func NewTestClock(now time.Time) *TestClock { return &TestClock{now: now} }

func (c *TestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *TestClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestInstance is one gateway instance: its stores on a pool of its own
// and its webhook service (dispatcher not started).
type TestInstance struct {
	Pool  *pgxpool.Pool
	Store *Store
	Hooks *webhooks.Service
}

// TestWebhookKey signs every partner's webhooks in these tests.
var TestWebhookKey = []byte("partner-webhook-key-0123456789abcdef")

// OpenTestInstance opens an instance on dsn whose webhook service sends
// over plain http to loopback receivers only, signing with TestWebhookKey;
// tune (may be nil) sets the rest of its options. The service, the store
// and then the pool are closed when t ends.
func OpenTestInstance(t *testing.T, dsn string, tune func(*webhooks.Options)) *TestInstance {
	t.Helper()
	pool, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	i := &TestInstance{Pool: pool, Store: New(pool)}
	t.Cleanup(i.Store.Close)
	o := webhooks.Options{
		Storage: i.Store.Webhooks(), AllowHTTP: true,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return TestWebhookKey, nil },
	}
	if tune != nil {
		tune(&o)
	}
	if i.Hooks, err = webhooks.New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { i.Hooks.Close() })
	return i
}

// WaitUntil polls cond until it holds, failing t after 30 s (the
// instances' loops run on the real clock): a bound on a hang, not a
// measure of speed.
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	pollUntil(t, 30*time.Second, what, cond)
}
