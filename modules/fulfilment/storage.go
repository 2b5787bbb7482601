package fulfilment

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Storage backends are guest modules in the namespace fulfilment.storage,
// as Caddy's own storage modules are in caddy.storage: the app's "storage"
// field names one by its "backend" key, and without it the app uses
// fulfilment.storage.badger in data_dir.

func init() {
	caddy.RegisterModule(new(BadgerStorage))
}

// StorageBackend is a fulfilment.storage module: it opens the stores the
// domain services keep their state in.
type StorageBackend interface {
	// OpenStores opens the stores of data directory dir (already made
	// private to the gateway's user), encrypted under key (nil: none). The
	// app calls it in Start, once for all the configs sharing dir across
	// reloads, never in Provision (so `caddy validate` opens nothing).
	OpenStores(dir string, key []byte, logger *zap.Logger) (Stores, error)
}

// Stores are an open backend's stores; Close closes the backend after the
// services using them are closed. Tokens and Webhooks return the same store
// at every call (a reload hands the running services their own store).
type Stores interface {
	Tokens() tokens.Store
	Webhooks() webhooks.Storage
	Feed(name string) feed.Store
	feed.Catalog
	Portal() portal.Store
	Close() error
}

// BadgerStorage is the fulfilment.storage.badger module: an embedded
// Badger database in the data directory, held by one process at a time.
// It is the default and takes no options.
type BadgerStorage struct{}

// CaddyModule returns the Caddy module information.
func (*BadgerStorage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "fulfilment.storage.badger",
		New: func() caddy.Module { return new(BadgerStorage) },
	}
}

// OpenStores opens the Badger database in dir with the gateway's settings
// (internal/datadir), logging through zap.
func (*BadgerStorage) OpenStores(dir string, key []byte, logger *zap.Logger) (Stores, error) {
	opts := badgerOptions(dir, logger)
	if len(key) > 0 {
		opts = datadir.WithEncryption(opts, key)
	}
	db, err := datadir.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return badgerStores{badgerstore.New(db)}, nil
}

// badgerStores are the stores of an open Badger database.
type badgerStores struct{ *badgerstore.Store }

func (s badgerStores) Close() error { return s.DB().Close() }

// UnmarshalCaddyfile parses `storage badger` (no arguments, no block).
func (*BadgerStorage) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(0) {
		return d.Err("storage badger takes no options: the data directory is data_dir")
	}
	return nil
}

// parseStorage parses `storage <backend> [...]` in the fulfilment global
// option into the backend's module object.
func parseStorage(d *caddyfile.Dispenser) (caddyfile.Unmarshaler, string, error) {
	if !d.NextArg() {
		return nil, "", d.ArgErr()
	}
	name := d.Val()
	unm, err := caddyfile.UnmarshalModule(d, "fulfilment.storage."+name)
	if err != nil {
		return nil, "", err
	}
	return unm, name, nil
}

var (
	_ StorageBackend        = (*BadgerStorage)(nil)
	_ caddyfile.Unmarshaler = (*BadgerStorage)(nil)
)
