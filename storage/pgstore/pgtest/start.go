package pgtest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options are a cluster's settings for Start.
type Options struct {
	// Durable turns fsync and full-page writes on (the tests' clusters run
	// without them): every commit is on disk when it returns, as on a
	// production server. For benchmarks.
	Durable bool
}

// Start starts a cluster outside a test (a benchmark program): in a new
// temporary directory, as the postgres user when run as root, listening
// on a unix socket in that directory only. The caller stops it with Stop.
func Start(o Options) (*Cluster, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	return startCluster(bins, o.Durable)
}

// CreateDatabase creates database name on c and returns the superuser's
// connection URL to it, for a caller without a test (Database is the
// tests' form). Nothing drops it: the cluster goes with Stop.
func (c *Cluster) CreateDatabase(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("connecting as the superuser: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return c.DSN(name), nil
}

// Commits returns how many transactions database name has committed
// (pg_stat_database: other sessions' counts arrive within about a second).
func (c *Cluster) Commits(name string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return 0, fmt.Errorf("connecting as the superuser: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int64
	if err := conn.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", name).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the commits of %s: %w", name, err)
	}
	return n, nil
}
