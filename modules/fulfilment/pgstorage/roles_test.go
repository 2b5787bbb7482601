package pgstorage

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// The deployment guide's roles: an owner migrates the schema (caddy
// fulfilment migrate); the gateways run as a role that may only read and
// write the tables.
func TestARoleWithOnlyDataRightsRunsOnAMigratedSchema(t *testing.T) {
	dsn := pgtest.Database(t)
	owner, err := FromURL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Migrate(context.Background(), false); err != nil {
		t.Fatalf("migrating as the owner: %v", err)
	}
	pgtest.Exec(t, "CREATE ROLE gw_runtime LOGIN PASSWORD 'runtime-password'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP ROLE IF EXISTS gw_runtime") })
	pool, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, grant := range []string{
		"GRANT USAGE ON SCHEMA public TO gw_runtime",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO gw_runtime",
	} {
		if _, err := pool.Exec(context.Background(), grant); err != nil {
			t.Fatalf("%s: %v", grant, err)
		}
	}
	t.Cleanup(func() { // the role owns nothing, but holds grants in the test database
		if p, err := pgstore.Open(context.Background(), dsn, pgstore.Options{}); err == nil {
			p.Exec(context.Background(), "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM gw_runtime")
			p.Exec(context.Background(), "REVOKE ALL ON SCHEMA public FROM gw_runtime")
			p.Close()
		}
	})
	pool.Close()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	runtime := pgtest.Server(t).DSNFor("gw_runtime", "runtime-password", strings.TrimPrefix(u.Path, "/"))
	st, err := provisioned(t, runtime).OpenStores(t.TempDir(), nil, zap.NewNop())
	if err != nil {
		t.Fatalf("OpenStores as a role with only SELECT, INSERT, UPDATE, DELETE on a migrated schema: %v; want it to start", err)
	}
	defer st.Close()
	if _, err := st.Tokens().Pepper(func() ([]byte, error) { return []byte("a pepper of thirty-two bytes....."), nil }); err != nil {
		t.Fatalf("storing the pepper as the runtime role: %v", err)
	}
}
