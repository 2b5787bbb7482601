package webhooks_test

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// The tests of this package run on real Badger, with the gateway's own
// settings.
func init() {
	webhooks.SetTestBackend(func(t testing.TB, dir string) (webhooks.Storage, func() error) {
		t.Helper()
		db, err := datadir.Open(dir, datadir.Options(dir, nil))
		if err != nil {
			t.Fatal(err)
		}
		return badgerstore.New(db).Webhooks(), db.Close
	})
}
