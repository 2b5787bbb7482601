package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/webhooks"
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

// t0 is the tests' "now"; claims take it as an argument, never the clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// due makes a queue entry for delivery id of partner p due at t.
func due(id, p string, t time.Time) webhooks.QueueEntry {
	return webhooks.QueueEntry{Pos: webhooks.SchedulePos(t, id), ID: id, PartnerID: p,
		SubscriptionID: "sub_" + p, Record: []byte("record of " + id)}
}

// instance is one gateway instance's stores on a pool of its own.
func instance(t *testing.T, dsn string) *Store {
	t.Helper()
	return New(openPool(t, dsn))
}

// ids lists the ids of es.
func ids(es []webhooks.QueueEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// claim claims up to n deliveries due at now (n of one partner at most),
// failing t on error.
func claim(t *testing.T, s *Store, now time.Time, n int, lease time.Duration) []webhooks.QueueEntry {
	t.Helper()
	return claimReq(t, s, webhooks.ClaimRequest{Now: now, Lease: lease, Max: n, PerPartner: n})
}

// claimReq claims as req asks, failing t on error.
func claimReq(t *testing.T, s *Store, req webhooks.ClaimRequest) []webhooks.QueueEntry {
	t.Helper()
	es, _, err := s.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return es
}
