package fulfilment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// OfflineStorage is the storage a configuration's fulfilment app names, for
// the commands that open it while no gateway runs on it (`caddy fulfilment
// export`, `import`, `migrate`).
type OfflineStorage struct {
	app  *App
	name string
}

// ConfiguredStorage reads data_dir, encryption_key and storage of the
// fulfilment app in cfgJSON (a Caddy JSON configuration; without the app,
// its defaults) and provisions the storage module, replacing
// placeholders, without opening anything.
func ConfiguredStorage(cfgJSON []byte, logger *zap.Logger) (*OfflineStorage, error) {
	var cfg struct {
		Apps struct {
			Fulfilment *struct {
				DataDir       string          `json:"data_dir,omitempty"`
				EncryptionKey string          `json:"encryption_key,omitempty"`
				StorageRaw    json.RawMessage `json:"storage,omitempty"`
			} `json:"fulfilment"`
		} `json:"apps"`
	}
	if len(cfgJSON) > 0 {
		if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
			return nil, fmt.Errorf("reading the fulfilment app's storage from the configuration: %w", err)
		}
	}
	a := &App{logger: logger}
	if f := cfg.Apps.Fulfilment; f != nil {
		a.DataDir, a.EncryptionKey, a.StorageRaw = f.DataDir, f.EncryptionKey, f.StorageRaw
	}
	return newOffline(a)
}

// BadgerDataDir is the Badger storage in dir (unencrypted).
func BadgerDataDir(dir string, logger *zap.Logger) (*OfflineStorage, error) {
	return newOffline(&App{DataDir: dir, logger: logger})
}

func newOffline(a *App) (*OfflineStorage, error) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := a.provisionDataDir(); err != nil {
		return nil, err
	}
	if err := a.provisionStorage(ctx); err != nil {
		return nil, err
	}
	if err := a.provisionEncryption(); err != nil {
		return nil, err
	}
	o := &OfflineStorage{app: a, name: "badger"}
	if mod, ok := a.storage.(caddy.Module); ok {
		o.name = mod.CaddyModule().ID.Name()
	}
	return o, nil
}

// Backend is the storage module (a *BadgerStorage, or another
// fulfilment.storage module).
func (o *OfflineStorage) Backend() StorageBackend { return o.app.storage }

// Name is the backend's name: badger, postgres.
func (o *OfflineStorage) Name() string { return o.name }

// DataDir is the data directory (Badger's database, when the backend is
// badger).
func (o *OfflineStorage) DataDir() string { return o.app.dir }

// Open opens the stores as a gateway would at start (Badger refuses a
// data directory a running gateway holds). With mustExist, a Badger data
// directory that does not exist is an error rather than created empty.
func (o *OfflineStorage) Open(mustExist bool) (Stores, error) {
	if _, isBadger := o.app.storage.(*BadgerStorage); isBadger && mustExist {
		if _, err := os.Stat(o.app.dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("there is no data directory %s", o.app.dir)
		}
	}
	return o.app.storage.OpenStores(o.app.dir, o.app.encKey, o.app.logger)
}
