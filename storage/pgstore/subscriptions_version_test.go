package pgstore

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// The database raises the subscriptions' version once for each statement
// that writes subscriptions, however many rows it writes, and not for a
// statement that writes none.

// insertSubscriptions is one statement inserting n subscriptions of
// partner P1, ids sub_bulk_1 to sub_bulk_n.
func insertSubscriptions(n int) string {
	return `INSERT INTO subscriptions (id, partner_id, event, notification_url, created_ns, unique_key)
SELECT 'sub_bulk_' || i, 'P1', 'order.shipped', 'https://receiver.example/' || i, 0, convert_to('bulk ' || i, 'UTF8')
FROM generate_series(1, ` + strconv.Itoa(n) + `) AS i`
}

// storedVersion reads the version row itself, with SQL.
func storedVersion(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(context.Background(), "SELECT version FROM subscriptions_version").Scan(&v); err != nil {
		t.Fatalf("reading subscriptions_version: %v", err)
	}
	return v
}

// versionRaisedBy runs the statement sql and returns how much it raised
// the version, and how many rows it wrote.
func versionRaisedBy(t *testing.T, pool *pgxpool.Pool, sql string) (raised, rows int64) {
	t.Helper()
	before := storedVersion(t, pool)
	tag, err := pool.Exec(context.Background(), sql)
	if err != nil {
		t.Fatalf("running %q: %v", sql, err)
	}
	return storedVersion(t, pool) - before, tag.RowsAffected()
}

func TestOneStatementWritingSeveralSubscriptionsRaisesTheVersionOnce(t *testing.T) {
	pool := migratedPool(t)
	for _, stmt := range []string{
		insertSubscriptions(5),
		"UPDATE subscriptions SET notification_url = notification_url || '/moved' WHERE partner_id = 'P1'",
		"DELETE FROM subscriptions WHERE partner_id = 'P1'",
	} {
		raised, rows := versionRaisedBy(t, pool, stmt)
		if rows != 5 {
			t.Fatalf("%q wrote %d subscriptions; the test needs 5", stmt, rows)
		}
		if raised != 1 {
			t.Errorf("%q wrote 5 subscriptions and raised the version by %d; want 1 (once per statement)", stmt, raised)
		}
	}
}

func TestAStatementWritingNoSubscriptionLeavesTheVersion(t *testing.T) {
	pool := migratedPool(t)
	if _, err := pool.Exec(context.Background(), insertSubscriptions(1)); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		insertSubscriptions(1) + " ON CONFLICT DO NOTHING", // sub_bulk_1 exists
		"INSERT INTO subscriptions SELECT * FROM subscriptions WHERE false",
		"UPDATE subscriptions SET event = 'order.cancelled' WHERE partner_id = 'nobody'",
		"DELETE FROM subscriptions WHERE id = 'sub_unknown'",
	} {
		raised, rows := versionRaisedBy(t, pool, stmt)
		if rows != 0 {
			t.Fatalf("%q wrote %d subscriptions; the test needs none", stmt, rows)
		}
		if raised != 0 {
			t.Errorf("%q wrote no subscription and raised the version by %d; want it left as it was", stmt, raised)
		}
	}
}

func TestTruncatingSubscriptionsRaisesTheVersion(t *testing.T) {
	pool := migratedPool(t)
	if _, err := pool.Exec(context.Background(), insertSubscriptions(3)); err != nil {
		t.Fatal(err)
	}
	if raised, _ := versionRaisedBy(t, pool, "TRUNCATE subscriptions"); raised != 1 {
		t.Errorf("TRUNCATE of 3 subscriptions raised the version by %d; want 1", raised)
	}
}

// Each create and delete through the store is one statement: it raises the
// version by one; a create of a subscription that exists and a delete of
// one that does not write nothing and leave it.
func TestEachSubscriptionWriteOfTheStoreRaisesTheVersionByOne(t *testing.T) {
	pool := migratedPool(t)
	ws := New(pool).Webhooks()
	sub := webhooks.Subscription{ID: "sub_1", PartnerID: "P1", Event: event, NotificationURL: "https://receiver.example/hook", CreatedAt: t0}
	steps := []struct {
		what  string
		write func() error
		want  int64
	}{
		{"a create", func() error { _, _, err := ws.CreateSubscription(context.Background(), sub, 10); return err }, 1},
		{"a create of the same subscription again", func() error {
			again := sub
			again.ID = "sub_2"
			_, created, err := ws.CreateSubscription(context.Background(), again, 10)
			if created {
				return errors.New("the same subscription was created twice")
			}
			return err
		}, 0},
		{"a delete", func() error { _, err := ws.DeleteSubscription("P1", sub.ID); return err }, 1},
		{"a delete of an unknown subscription", func() error {
			if _, err := ws.DeleteSubscription("P1", sub.ID); !errors.Is(err, webhooks.ErrNotFound) {
				return errors.New("deleting it again was not ErrNotFound")
			}
			return nil
		}, 0},
	}
	for _, s := range steps {
		before := storedVersion(t, pool)
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if raised := storedVersion(t, pool) - before; raised != s.want {
			t.Errorf("%s raised the version by %d; want %d", s.what, raised, s.want)
		}
	}
}

// Migration 00007's Down restores the trigger of 00006 (once per row), and
// its Up again gives once per statement.
func TestMigration7DownRestoresTheTriggerPerRowAndUpAgainPerStatement(t *testing.T) {
	pool := migratedPool(t)
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.DownTo(ctx, 6); err != nil {
		t.Fatalf("migrating down to 6: %v", err)
	}
	if raised, _ := versionRaisedBy(t, pool, insertSubscriptions(3)); raised != 3 {
		t.Errorf("after Down to 6, inserting 3 subscriptions in one statement raised the version by %d; want 3 (00006's trigger, once per row)", raised)
	}
	if raised, _ := versionRaisedBy(t, pool, "TRUNCATE subscriptions"); raised != 1 {
		t.Errorf("after Down to 6, TRUNCATE raised the version by %d; want 1", raised)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
	if raised, _ := versionRaisedBy(t, pool, insertSubscriptions(3)); raised != 1 {
		t.Errorf("after Up again, inserting 3 subscriptions in one statement raised the version by %d; want 1", raised)
	}
}

// Statements of every form that write subscriptions raise the version:
// an upsert, MERGE (update, delete, insert) and a data-modifying CTE.
func TestEveryFormOfStatementWritingSubscriptionsRaisesTheVersion(t *testing.T) {
	pool := migratedPool(t)
	const merge = `MERGE INTO subscriptions s USING (SELECT 'sub_bulk_' || i AS id FROM generate_series(1, 2) AS i) v ON s.id = v.id `
	for _, stmt := range []string{
		insertSubscriptions(2) + " ON CONFLICT (id) DO UPDATE SET event = 'order.cancelled'",
		merge + "WHEN MATCHED THEN UPDATE SET event = 'order.shipped'",
		merge + "WHEN MATCHED THEN DELETE",
		merge + `WHEN NOT MATCHED THEN INSERT (id, partner_id, event, notification_url, created_ns, unique_key)
VALUES (v.id, 'P1', 'order.shipped', 'https://receiver.example/' || v.id, 0, convert_to(v.id, 'UTF8'))`,
		"WITH gone AS (DELETE FROM subscriptions RETURNING id) SELECT count(*) FROM gone",
	} {
		before := storedVersion(t, pool)
		if _, err := pool.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("running %q: %v", stmt, err)
		}
		if storedVersion(t, pool) == before {
			t.Errorf("%q wrote subscriptions and left the version at %d; want it raised", stmt, before)
		}
	}
}
