package badgerstore

import (
	"net/netip"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// openDB opens a real Badger in a temp dir with the gateway's own settings.
func openDB(t testing.TB) *badger.DB {
	t.Helper()
	dir := t.TempDir()
	db, err := datadir.Open(dir, datadir.Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newService is a webhook service on db that accepts loopback http URLs.
func newService(t testing.TB, db *badger.DB, limit int) *webhooks.Service {
	t.Helper()
	s, err := webhooks.New(webhooks.Options{
		Storage: New(db).Webhooks(), AllowHTTP: true, MaxSubscriptionsPerPartner: limit,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return []byte("partner-webhook-key-0123456789abcdef"), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countPrefixT counts the keys under prefix.
func countPrefixT(t testing.TB, db *badger.DB, prefix string) int {
	t.Helper()
	n, err := countPrefix(db, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
