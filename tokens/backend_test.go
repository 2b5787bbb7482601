package tokens_test

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// The tests of this package run on real Badger, with the gateway's own
// settings.
func init() {
	tokens.SetTestBackend(func(t testing.TB, dir string) (tokens.Store, func() error) {
		t.Helper()
		db, err := datadir.Open(dir, datadir.Options(dir, nil))
		if err != nil {
			t.Fatal(err)
		}
		return badgerstore.New(db).Tokens(), db.Close
	})
}
