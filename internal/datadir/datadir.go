// Package datadir holds the one definition of how Fulfilgate opens its
// Badger data directory. The gateway (caddymodule) and the queue benchmark
// (bench/webhooks) both use it, so a benchmark figure describes the shipped
// settings. It does not import Caddy.
package datadir

import (
	"fmt"
	"os"

	"github.com/dgraph-io/badger/v4"
)

// Options returns the Badger options of a data directory; logger may be nil
// (Badger then logs nothing). Writes are synced (an accepted webhook event
// must survive kill -9; concurrent commits share one fsync), one version of
// each key is kept, and conflict detection stays on (idempotent creates rely
// on it).
func Options(dir string, logger badger.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(logger).
		WithIndexCacheSize(0).
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false)
}

// Open creates dir (mode 0700) when missing and opens it with opts.
func Open(dir string, opts badger.Options) (*badger.DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("opening data dir %s: %w", dir, err)
	}
	return db, nil
}
