package pgstorage

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// A gateway instance on PostgreSQL (tokens, webhooks with their
// dispatcher) holds one listening connection, and none once it stopped.
func TestAGatewayOnPostgresHoldsOneListeningConnection(t *testing.T) {
	dsn := pgtest.Database(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	storage, err := json.Marshal(map[string]string{"backend": "postgres", "dsn": dsn})
	if err != nil {
		t.Fatal(err)
	}
	a := &fulfilment.App{DataDir: t.TempDir(), StorageRaw: storage,
		Tokens:   &fulfilment.TokensConfig{},
		Webhooks: &fulfilment.WebhooksConfig{}}
	if err := a.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			a.Stop()
		}
	})
	if n := pgtest.ListeningSessions(t, pool); n != 1 {
		t.Fatalf("a running gateway holds %d listening sessions, want 1", n)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	cancel() // the config is unloaded: its storage is closed
	deadline := time.Now().Add(30 * time.Second)
	for pgtest.ListeningSessions(t, pool) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the gateway stopped, %d listening sessions remain after 30s, want none", pgtest.ListeningSessions(t, pool))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
