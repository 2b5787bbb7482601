package webhooks_test

import (
	"os"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgstoretest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// With FULFILGATE_TEST_BACKEND=postgres the tests of this package run on
// PostgreSQL instead of Badger.
func TestMain(m *testing.M) {
	if !pgstoretest.Enabled() {
		os.Exit(m.Run())
	}
	webhooks.SetTestBackend(func(t testing.TB, dir string) (webhooks.Storage, func() error) {
		s, closeFn := pgstoretest.Open(t, dir)
		return s.Webhooks(), closeFn
	})
	pgstoretest.Main(m)
}
