// Package pgstorage is the fulfilment.storage.postgres module: the
// gateway's state (partners, clients, keys, subscriptions, the webhook
// queue, dead letters, feed cursors) in a PostgreSQL database, through
// storage/pgstore. At start it connects and migrates the schema under an
// advisory lock. Several gateway instances may share one database.
//
//	fulfilment {
//		storage postgres {env.FULFILGATE_DATABASE_URL} {
//			max_conns 10
//			statement_timeout 30s
//			listen_timeout 10s
//		}
//	}
package pgstorage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/storage/pgstore"
)

func init() {
	caddy.RegisterModule(new(Storage))
}

// startTimeout bounds connecting and migrating at start.
const startTimeout = time.Minute

// Storage is the fulfilment.storage.postgres module.
type Storage struct {
	// DSN is the database's URL (postgres://user:password@host:port/db?...)
	// or key=value string; placeholders such as {env.FULFILGATE_DATABASE_URL}
	// are replaced.
	DSN string `json:"dsn,omitempty"`
	// MaxConns caps the connection pool (default: the larger of 4 and the
	// number of CPUs).
	MaxConns int32 `json:"max_conns,omitempty"`
	// StatementTimeout ends a statement that runs longer (default: the
	// server's statement_timeout).
	StatementTimeout caddy.Duration `json:"statement_timeout,omitempty"`
	// ListenTimeout bounds opening the connection that listens for the
	// other instances' changes and queued deliveries: connecting and its
	// LISTENs (default 30s, the bound of every storage operation).
	ListenTimeout caddy.Duration `json:"listen_timeout,omitempty"`

	dsn string // DSN with its placeholders replaced
}

// CaddyModule returns the Caddy module information.
func (*Storage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "fulfilment.storage.postgres",
		New: func() caddy.Module { return new(Storage) },
	}
}

// Provision replaces the DSN's placeholders and checks the settings,
// without connecting (so `caddy validate` needs no database).
func (s *Storage) Provision(caddy.Context) error {
	repl := caddy.NewReplacer()
	dsn, err := repl.ReplaceOrErr(s.DSN, true, true)
	if err != nil {
		return fmt.Errorf("the PostgreSQL database URL: %w", err)
	}
	if dsn == "" {
		return errors.New("storage postgres needs the database URL (e.g. {env.FULFILGATE_DATABASE_URL}), and it is empty")
	}
	if s.MaxConns < 0 || s.StatementTimeout < 0 || s.ListenTimeout < 0 {
		return errors.New("storage postgres: max_conns, statement_timeout and listen_timeout must not be negative")
	}
	if err := pgstore.CheckDSN(dsn); err != nil {
		return err
	}
	s.dsn = dsn
	return nil
}

// OpenStores connects and migrates the schema.
// The data directory stays the gateway's (for its other files); the
// state is in the database. An encryption key is refused: it encrypts the
// Badger data directory, and PostgreSQL's data is protected by the
// database's own means.
func (s *Storage) OpenStores(dir string, key []byte, logger *zap.Logger) (fulfilment.Stores, error) {
	if len(key) > 0 {
		return nil, errors.New("encryption_key encrypts the Badger data directory and does not apply to storage postgres: remove it, and protect the database by its own means (disk encryption, TLS, roles)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	pool, err := pgstore.Open(ctx, s.dsn, pgstore.Options{MaxConns: s.MaxConns, StatementTimeout: time.Duration(s.StatementTimeout)})
	if err != nil {
		return nil, err
	}
	res, err := pgstore.Migrate(ctx, pool, false)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(res.Applied) > 0 {
		logger.Info("PostgreSQL schema migrated", zap.Int64("from", res.From), zap.Int64("to", res.To), zap.Int("applied", len(res.Applied)))
	}
	st := pgstore.New(pool).ListenTimeout(time.Duration(s.ListenTimeout)).OnError(func(err error) { logger.Warn("PostgreSQL storage upkeep failed", zap.Error(err)) })
	logger.Info("PostgreSQL storage opened", zap.Int64("schema_version", res.To), zap.String("instance", st.Instance()))
	return &stores{Store: st}, nil
}

// stores are the open database's stores.
type stores struct {
	*pgstore.Store
}

// Close releases the listening connection, then closes the pool.
func (s *stores) Close() error {
	s.Store.Close()
	s.Pool().Close()
	return nil
}

// UnmarshalCaddyfile parses
//
//	storage postgres <dsn> {
//		max_conns <n>
//		statement_timeout <duration>
//		listen_timeout <duration>
//	}
func (s *Storage) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	if !d.NextArg() {
		return d.Errf("storage postgres needs the database URL, e.g. storage postgres {env.FULFILGATE_DATABASE_URL}")
	}
	s.DSN = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		opt := d.Val()
		if seen[opt] {
			return d.Errf("%s given twice", opt)
		}
		seen[opt] = true
		if !d.NextArg() {
			return d.ArgErr()
		}
		val := d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
		switch opt {
		case "max_conns":
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil || n < 1 {
				return d.Errf("max_conns must be a positive whole number, not %q", val)
			}
			s.MaxConns = int32(n)
		case "statement_timeout", "listen_timeout":
			dur, err := caddy.ParseDuration(val)
			if err != nil || dur <= 0 {
				return d.Errf("%s must be a positive duration, not %q", opt, val)
			}
			if opt == "statement_timeout" {
				s.StatementTimeout = caddy.Duration(dur)
			} else {
				s.ListenTimeout = caddy.Duration(dur)
			}
		default:
			return d.Errf("unknown storage postgres option %q (max_conns, statement_timeout, listen_timeout)", opt)
		}
	}
	return nil
}

var (
	_ fulfilment.StorageBackend = (*Storage)(nil)
	_ caddy.Provisioner         = (*Storage)(nil)
	_ caddyfile.Unmarshaler     = (*Storage)(nil)
)
