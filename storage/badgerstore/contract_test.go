package badgerstore_test

import (
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// open opens a Badger in dir with the gateway's own settings, closed when
// the test ends (or by Reopen).
func open(t *testing.T, dir string) storagetest.Backend {
	t.Helper()
	db, err := datadir.Open(dir, datadir.Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !db.IsClosed() {
			db.Close()
		}
	})
	return backend(t, dir, db)
}

func backend(t *testing.T, dir string, db *badger.DB) storagetest.Backend {
	s := badgerstore.New(db)
	return storagetest.Backend{
		Tokens:    s.Tokens(),
		Webhooks:  s.Webhooks(),
		Feed:      func(name string) feed.Store { return s.Feed(name) },
		FeedNames: s.FeedNames,
		Portal:    s.Portal(),
		Reopen: func(t *testing.T) storagetest.Backend {
			t.Helper()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, dir)
		},
	}
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Backend { return open(t, t.TempDir()) })
}

func TestTransferBadgerToBadger(t *testing.T) {
	fresh := func(t *testing.T) storagetest.Backend { return open(t, t.TempDir()) }
	storagetest.RunTransfer(t, fresh, fresh)
}
