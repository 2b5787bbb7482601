package pgstore

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// backend opens the stores on dsn with a pool of its own; Reopen closes
// the pool and opens a new one on the same database, as a restart would;
// Peer opens another instance's stores on the same database.
func backend(t *testing.T, dsn string) storagetest.Backend {
	t.Helper()
	pool := openPool(t, dsn)
	s := New(pool)
	return storagetest.Backend{
		Tokens:    s.Tokens(),
		Webhooks:  s.Webhooks(),
		Feed:      func(name string) feed.Store { return s.Feed(name) },
		FeedNames: s.FeedNames,
		Portal:    s.Portal(),
		Reopen: func(t *testing.T) storagetest.Backend {
			t.Helper()
			pool.Close()
			return backend(t, dsn)
		},
		Peer: func(t *testing.T) storagetest.Backend {
			t.Helper()
			return backend(t, dsn)
		},
	}
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Backend {
		return backend(t, migratedPool(t).Config().ConnString())
	})
}

func TestTransferPostgresToPostgres(t *testing.T) {
	fresh := func(t *testing.T) storagetest.Backend { return backend(t, migratedPool(t).Config().ConnString()) }
	storagetest.RunTransfer(t, fresh, fresh)
}
