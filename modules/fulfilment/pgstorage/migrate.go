package pgstorage

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
)

// FromURL is the module for the database at dsn (no placeholders),
// provisioned.
func FromURL(dsn string) (*Storage, error) {
	s := &Storage{DSN: dsn}
	if err := s.Provision(caddy.Context{}); err != nil {
		return nil, err
	}
	return s, nil
}

// Migrate connects and brings the schema up to this binary's version, as
// the gateway does at start, under the same advisory lock; with dryRun it
// lists the migrations it would apply and changes nothing.
func (s *Storage) Migrate(ctx context.Context, dryRun bool) (pgstore.MigrateResult, error) {
	pool, err := pgstore.Open(ctx, s.dsn, pgstore.Options{MaxConns: s.MaxConns, StatementTimeout: time.Duration(s.StatementTimeout)})
	if err != nil {
		return pgstore.MigrateResult{}, err
	}
	defer pool.Close()
	return pgstore.Migrate(ctx, pool, dryRun)
}
