// Package pgstore is the PostgreSQL backend of the gateway's storage: the
// schema and its migrations (embedded, applied under an advisory lock) and
// the stores on a pgx connection pool. It is the only package that imports
// the PostgreSQL driver.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options tune the connection pool; zero values keep pgx's defaults.
type Options struct {
	// MaxConns caps the pool's connections (pgx's default: the larger of 4
	// and the number of CPUs).
	MaxConns int32
	// StatementTimeout ends any statement that runs longer (PostgreSQL's
	// statement_timeout; 0 leaves the server's setting).
	StatementTimeout time.Duration
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and checks that it answers. Its errors say what is wrong (an
// invalid URL, an unreachable server, refused credentials, a missing
// database) and never contain the password.
func Open(ctx context.Context, dsn string, opts Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL database URL is not valid: %s", parseReason(err))
	}
	if opts.MaxConns < 0 || opts.StatementTimeout < 0 {
		return nil, errors.New("PostgreSQL pool options must not be negative")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(opts.StatementTimeout.Milliseconds())
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening the PostgreSQL pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, connectError(cfg.ConnConfig.User, cfg.ConnConfig.Database, cfg.ConnConfig.Host, err)
	}
	return pool, nil
}

// CheckDSN reports whether dsn parses as a connection string, without
// connecting; its error never contains the password.
func CheckDSN(dsn string) error {
	if _, err := pgxpool.ParseConfig(dsn); err != nil {
		return fmt.Errorf("the PostgreSQL database URL is not valid: %s", parseReason(err))
	}
	return nil
}

// parseReason is pgx's reason a connection string does not parse, without
// the string itself (which may hold the password).
func parseReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "`: "); i >= 0 && strings.HasPrefix(msg, "cannot parse `") {
		return msg[i+3:]
	}
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) && pce.Unwrap() != nil {
		return pce.Unwrap().Error()
	}
	return "it does not parse"
}

// connectError describes a failed first connection, with a hint for the
// server's most common refusals.
func connectError(user, database, host string, err error) error {
	where := fmt.Sprintf("PostgreSQL at %s (user %q, database %q)", host, user, database)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return fmt.Errorf("%s refused the credentials: check the user and password of the database URL: %w", where, err)
		case "3D000":
			return fmt.Errorf("%s has no database %q: create it first: %w", where, database, err)
		}
		return fmt.Errorf("%s refused the connection: %w", where, err)
	}
	return fmt.Errorf("cannot reach %s: %w", where, err)
}
