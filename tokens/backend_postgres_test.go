package tokens_test

import (
	"os"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgstoretest"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// With FULFILGATE_TEST_BACKEND=postgres the tests of this package run on
// PostgreSQL instead of Badger.
func TestMain(m *testing.M) {
	if !pgstoretest.Enabled() {
		os.Exit(m.Run())
	}
	tokens.SetTestBackend(func(t testing.TB, dir string) (tokens.Store, func() error) {
		s, closeFn := pgstoretest.Open(t, dir)
		return s.Tokens(), closeFn
	})
	pgstoretest.Main(m)
}
