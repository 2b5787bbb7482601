package transfer_test

import (
	"context"
	"testing"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/storage/storagetest"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openBadger opens a fresh Badger store in dir, closed when the test
// ends.
func openBadger(t *testing.T, dir string) storagetest.Backend {
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
	s := badgerstore.New(db)
	return storagetest.Backend{
		Tokens: s.Tokens(), Webhooks: s.Webhooks(), FeedNames: s.FeedNames,
		Feed: func(name string) feed.Store { return s.Feed(name) }, Portal: s.Portal(),
		Reopen: func(t *testing.T) storagetest.Backend {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			return openBadger(t, dir)
		},
	}
}

// openPostgres opens the stores of a fresh migrated database.
func openPostgres(t *testing.T) storagetest.Backend {
	t.Helper()
	dsn := pgtest.Database(t)
	pool, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgstore.Migrate(context.Background(), pool, false); err != nil {
		t.Fatal(err)
	}
	return postgresOn(t, dsn)
}

// postgresOn opens the stores of database dsn on a pool of their own;
// Reopen opens them again on a new pool.
func postgresOn(t *testing.T, dsn string) storagetest.Backend {
	t.Helper()
	p, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s := pgstore.New(p)
	return storagetest.Backend{
		Tokens: s.Tokens(), Webhooks: s.Webhooks(), FeedNames: s.FeedNames,
		Feed: func(name string) feed.Store { return s.Feed(name) }, Portal: s.Portal(),
		Reopen: func(t *testing.T) storagetest.Backend {
			p.Close()
			return postgresOn(t, dsn)
		},
	}
}

func TestTransferBadgerToPostgres(t *testing.T) {
	storagetest.RunTransfer(t, func(t *testing.T) storagetest.Backend { return openBadger(t, t.TempDir()) }, openPostgres)
}

func TestTransferPostgresToBadger(t *testing.T) {
	storagetest.RunTransfer(t, openPostgres, func(t *testing.T) storagetest.Backend { return openBadger(t, t.TempDir()) })
}
