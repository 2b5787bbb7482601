package feed_test

import (
	"os"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgstoretest"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// With FULFILGATE_TEST_BACKEND=postgres the tests of this package run on
// PostgreSQL instead of Badger.
func TestMain(m *testing.M) {
	if !pgstoretest.Enabled() {
		os.Exit(m.Run())
	}
	feed.SetTestBackend(func(t testing.TB, dir string) (webhooks.QueueStorage, func(string) feed.Store, func() error) {
		s, closeFn := pgstoretest.Open(t, dir)
		return s.Webhooks(), s.Feed, closeFn
	})
	pgstoretest.Main(m)
}
