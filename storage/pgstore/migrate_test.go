package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// schemaTables are the tables the schema must hold: all the gateway's state.
var schemaTables = []string{"gateway_secrets", "partners", "static_webhook_keys", "clients", "signing_keys",
	"subscriptions", "subscriptions_version", "deliveries", "dead_letters", "delivered", "quarantined_deliveries", "feed_cursors", "feed_seen", "feed_rejected",
	"feed_leases"}

func TestMigrateCreatesTheSchemaOnAnEmptyDatabase(t *testing.T) {
	pool := openPool(t, pgtest.Database(t))
	res, err := Migrate(context.Background(), pool, false)
	if err != nil {
		t.Fatalf("Migrate on an empty database: %v", err)
	}
	if res.From != 0 || res.To != LatestVersion() || len(res.Applied) == 0 || res.DryRun {
		t.Errorf("Migrate = %+v, want from 0 to %d with the migrations applied", res, LatestVersion())
	}
	for _, table := range schemaTables {
		if !tableExists(t, pool, table) {
			t.Errorf("after Migrate there is no table %s", table)
		}
	}
}

func TestMigrateAgainAppliesNothing(t *testing.T) {
	pool := migratedPool(t)
	res, err := Migrate(context.Background(), pool, false)
	if err != nil {
		t.Fatalf("Migrate on a migrated database: %v", err)
	}
	if len(res.Applied) != 0 || res.From != LatestVersion() || res.To != LatestVersion() {
		t.Errorf("Migrate on a migrated database = %+v, want nothing applied at version %d", res, LatestVersion())
	}
}

func TestMigrateDryRunChangesNothing(t *testing.T) {
	pool := openPool(t, pgtest.Database(t))
	res, err := Migrate(context.Background(), pool, true)
	if err != nil {
		t.Fatalf("dry run on an empty database: %v", err)
	}
	if !res.DryRun || res.From != 0 || res.To != LatestVersion() || len(res.Applied) == 0 || res.Applied[0].Name != "00001_schema.sql" {
		t.Errorf("dry run = %+v, want every migration listed as to apply, from 0 to %d", res, LatestVersion())
	}
	for _, table := range append([]string{VersionTable}, schemaTables...) {
		if tableExists(t, pool, table) {
			t.Errorf("a dry run created table %s: want nothing changed", table)
		}
	}
}

// TestMigrateThreeInstancesAtOnce starts three instances (a pool each) on
// an empty database at the same moment: each must succeed, and the
// migrations must be applied exactly once between them.
func TestMigrateThreeInstancesAtOnce(t *testing.T) {
	dsn := pgtest.Database(t)
	const instances = 3
	results := make([]MigrateResult, instances)
	errs := make([]error, instances)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range instances {
		pool := openPool(t, dsn)
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			results[i], errs[i] = Migrate(context.Background(), pool, false)
		}()
	}
	start.Done()
	done.Wait()
	applied := 0
	for i := range instances {
		if errs[i] != nil {
			t.Errorf("instance %d: Migrate: %v", i, errs[i])
		}
		if results[i].To != LatestVersion() {
			t.Errorf("instance %d: schema version after Migrate %d, want %d", i, results[i].To, LatestVersion())
		}
		applied += len(results[i].Applied)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	known, _ := embeddedMigrations(sub)
	if applied != len(known) {
		t.Errorf("the three instances applied %d migrations between them, want each of the %d exactly once", applied, len(known))
	}
	var rows int
	if err := openPool(t, dsn).QueryRow(context.Background(),
		"SELECT count(*) FROM "+VersionTable+" WHERE version_id > 0").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(known) {
		t.Errorf("the version table records %d applied migrations, want %d", rows, len(known))
	}
}

// withFutureMigration is the embedded migrations plus one of a newer
// gateway.
func withFutureMigration(t *testing.T) fs.FS {
	t.Helper()
	sub, _ := fs.Sub(migrations, "migrations")
	out := fstest.MapFS{}
	names, _ := fs.Glob(sub, "*.sql")
	for _, n := range names {
		b, err := fs.ReadFile(sub, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = &fstest.MapFile{Data: b}
	}
	out["09999_future.sql"] = &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE from_the_future (x int);\n-- +goose Down\nDROP TABLE from_the_future;\n")}
	return out
}

func TestMigrateRefusesASchemaNewerThanTheBinary(t *testing.T) {
	pool := openPool(t, pgtest.Database(t))
	if _, err := migrate(context.Background(), pool, withFutureMigration(t), false); err != nil {
		t.Fatalf("migrating as a newer gateway: %v", err)
	}
	for _, dry := range []bool{false, true} {
		_, err := Migrate(context.Background(), pool, dry)
		if !errors.Is(err, ErrSchemaNewer) {
			t.Fatalf("Migrate (dry run %v) on a schema of a newer gateway: got %v, want ErrSchemaNewer", dry, err)
		}
		latest := fmt.Sprintf("up to %d", LatestVersion())
		if msg := err.Error(); !strings.Contains(msg, "schema version 9999") || !strings.Contains(msg, latest) {
			t.Errorf("the refusal %q should name the database's version (9999) and this gateway's latest (%s)", msg, latest)
		}
	}
	if !tableExists(t, pool, "from_the_future") {
		t.Errorf("the refused Migrate changed the newer schema")
	}
}

func TestMigrateWorksWithAPoolOfOneConnection(t *testing.T) {
	pool, err := Open(context.Background(), pgtest.Database(t), Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := Migrate(ctx, pool, false); err != nil || res.To != LatestVersion() {
		t.Fatalf("Migrate with max_conns 1 = %+v, %v; want the schema migrated (the lock must not take the pool's only connection)", res, err)
	}
}
