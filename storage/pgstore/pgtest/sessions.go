package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ListeningSessions counts the sessions of pool's database that listen
// (their last statement a LISTEN), other than the one asking.
func ListeningSessions(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatalf("counting the listening sessions: %v", err)
	}
	return n
}
