package feed_test

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// The tests of this package run on real Badger, with the gateway's own
// settings.
func init() {
	feed.SetTestBackend(func(t testing.TB, dir string) (webhooks.QueueStorage, func(string) feed.Store, func() error) {
		t.Helper()
		db, err := datadir.Open(dir, datadir.Options(dir, nil))
		if err != nil {
			t.Fatal(err)
		}
		s := badgerstore.New(db)
		return s.Webhooks(), s.Feed, db.Close
	})
}
