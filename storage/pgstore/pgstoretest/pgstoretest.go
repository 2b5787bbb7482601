// Package pgstoretest runs the domain packages' own tests on PostgreSQL:
// with FULFILGATE_TEST_BACKEND=postgres, a package's TestMain sets its test
// backend hook to Open and starts the pgtest cluster (Main).
package pgstoretest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// BackendEnv names the variable that selects the test backend.
const BackendEnv = "FULFILGATE_TEST_BACKEND"

// Enabled reports whether the domain tests should run on PostgreSQL.
func Enabled() bool { return os.Getenv(BackendEnv) == "postgres" }

// Main runs the tests with the pgtest cluster (see pgtest.Main).
func Main(m *testing.M) { pgtest.Main(m) }

var (
	mu  sync.Mutex
	dbs = map[string]string{} // key → DSN of its migrated database
)

// Open opens the stores of the database of key (a test's data directory):
// a fresh migrated database the first time, the same one again after, as a
// restart finds its data. The database is dropped when the test that first
// opened it ends. close closes the store, then the pool.
func Open(t testing.TB, key string) (*pgstore.Store, func() error) {
	t.Helper()
	dsn, ok := database(t, key)
	ctx := context.Background()
	pool, err := pgstore.Open(ctx, dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if _, err := pgstore.Migrate(ctx, pool, false); err != nil {
			pool.Close()
			t.Fatal(err)
		}
	}
	st := pgstore.New(pool)
	return st, func() error { st.Close(); pool.Close(); return nil }
}

// database returns the DSN of key's database, creating it when there is
// none (existed false); the lock is released by defer, since pgtest skips the
// test (ending its goroutine) when PostgreSQL is missing.
func database(t testing.TB, key string) (dsn string, existed bool) {
	mu.Lock()
	defer mu.Unlock()
	if dsn, ok := dbs[key]; ok {
		return dsn, true
	}
	dsn = pgtest.Database(t)
	dbs[key] = dsn
	return dsn, false
}
