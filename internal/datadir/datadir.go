// Package datadir holds the one definition of how Fulfilgate opens its
// Badger data directory. The gateway (modules/fulfilment) and the queue benchmark
// (bench/webhooks) both use it, so a benchmark figure describes the shipped
// settings. It does not import Caddy.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Options returns the Badger options of a data directory; logger may be nil
// (Badger then logs nothing). The data is small records (webhook
// deliveries, tokens, feed cursors) written in bursts, so the settings trade
// Badger's large default buffers for a bounded memory footprint (a backlog
// of 1,000,000 queued deliveries; docs/dev/benchmarks.md):
//
//   - SyncWrites: an accepted webhook event must survive kill -9;
//     concurrent commits share one fsync.
//   - NumVersionsToKeep 1, conflict detection on (idempotent creates and
//     the publish/cursor transactions rely on it).
//   - MemTableSize 2 MiB × NumMemtables 2 (default 64 MiB × 5): each
//     memtable is a Go-heap arena, and each flush builds an L0 table whose
//     buffers (the table raw and compressed, in doubling chunks) Badger
//     keeps pooled for reuse, up to 8 of them, so both scale with it. The
//     transaction limit is 15 % of it (300 KiB, about 3,200 entries); the
//     webhook queue splits larger batches, and replay and purge shrink
//     theirs when one does not fit.
//   - ValueThreshold 64 KiB (default 1 MiB, which must stay below that
//     limit or Open fails): values up to 64 KiB stay in the LSM tree.
//   - BaseTableSize 512 KiB (default 2 MiB): compaction runs up to 8 table
//     builders at once, each holding its table raw and compressed.
//   - NumCompactors 2 (the minimum; default 4): fewer concurrent builders.
//   - BlockCacheSize 8 MiB (default 256 MiB): holds decompressed blocks;
//     the queue reads only the head of its schedule.
//   - IndexCacheSize 0: table indexes stay in memory (they are small).
//   - Compression Snappy (the default): the tables are memory-mapped and
//     their pages count in RSS; compressed, 1,000,000 deliveries take about
//     100 MiB instead of about 400 MiB.
func Options(dir string, logger badger.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(logger).
		WithNumVersionsToKeep(1).
		WithMemTableSize(2 << 20).
		WithNumMemtables(2).
		WithValueThreshold(64 << 10).
		WithBaseTableSize(512 << 10).
		WithNumCompactors(2).
		WithBlockCacheSize(8 << 20).
		WithIndexCacheSize(0).
		WithCompression(options.Snappy).
		WithMetricsEnabled(false)
}

// Open creates dir (mode 0700) when missing and opens it with opts.
func Open(dir string, opts badger.Options) (*badger.DB, error) {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	db, err := badger.Open(opts)
	if err != nil && (errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "Cannot acquire directory lock")) {
		return nil, fmt.Errorf("%w: %s is locked by %s; another gateway runs with the same data_dir: stop it, or give this one its own data_dir (%v)",
			ErrInUse, dir, lockHolder(dir), err)
	}
	if errors.Is(err, badger.ErrEncryptionKeyMismatch) {
		how := "it is encrypted with another key"
		if len(opts.EncryptionKey) == 0 {
			how = "it is encrypted, and no encryption key is configured"
		}
		return nil, fmt.Errorf("opening data dir %s: %s (or it was written unencrypted: a data dir keeps the encryption it was created with): %w", dir, how, err)
	}
	if err != nil {
		return nil, fmt.Errorf("opening data dir %s: %w", dir, err)
	}
	return db, nil
}

// ErrInUse is returned by Open when another process holds the data dir.
// (Badger formats its lock error into text, so Open recognises it by its
// message as well as by the flock error it may wrap.)
var ErrInUse = errors.New("data dir in use by another process")

// lockHolder names the process holding dir's lock, from the pid Badger
// writes into its LOCK file.
func lockHolder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "LOCK"))
	if pid := strings.TrimSpace(string(b)); err == nil && pid != "" {
		return "process " + pid
	}
	return "another process"
}
