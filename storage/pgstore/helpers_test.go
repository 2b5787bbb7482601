package pgstore

import (
	"context"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openPool opens a pool on dsn, closed when t ends.
func openPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatalf("opening %s: %v", dsn, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// migratedPool is a pool on a fresh, migrated database.
func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := openPool(t, pgtest.Database(t))
	if _, err := Migrate(context.Background(), pool, false); err != nil {
		t.Fatalf("migrating a fresh database: %v", err)
	}
	return pool
}

// tableExists reports whether the table name exists in pool's database.
func tableExists(t *testing.T, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(context.Background(), "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok); err != nil {
		t.Fatalf("looking for table %s: %v", name, err)
	}
	return ok
}
