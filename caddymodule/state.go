package caddymodule

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/dgraph-io/badger/v4"
	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"go.uber.org/zap"
)

// statePool holds one sharedState per data directory, reference-counted
// across config loads (Caddy's acmeserver does the same with bbolt).
var statePool = caddy.NewUsagePool()

// sharedState is everything that lives as long as a data directory is in use
// by any loaded config: the Badger handle and the long-running services that
// use it (dispatcher, feed readers, key ring, ...).
type sharedState struct {
	Stores Stores // the domain services' stores, from the storage module
	Dir    string
	logger *zap.Logger
	keyID  [32]byte // SHA-256 of the encryption key it was opened with (zero: none)

	mu       sync.Mutex
	services map[string]any
	order    []string // creation order; closed in reverse

	cfgMu   sync.Mutex                  // one apply or restore at a time (state_in_force.go)
	inForce map[string]*App             // part ("tokens", "webhooks", "feeds") → the config whose settings it runs with
	apply   map[string]func(*App) error // part → puts a config's settings into it

	appsMu sync.Mutex // taken alone or inside cfgMu, never around it
	apps   []*App     // configs started on this data directory, oldest first
}

// service returns the long-running service registered under name, creating
// it with make on first use. It lives until the last config using this data
// directory stops; if it implements interface{ Close() error } it is closed
// then, in reverse creation order.
func (s *sharedState) service(name string, make func() (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.services[name]; ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return nil, err
	}
	s.services[name] = v
	s.order = append(s.order, name)
	return v, nil
}

// existing returns the service registered under name, if one is.
func (s *sharedState) existing(name string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.services[name]
	return v, ok
}

// Destruct closes the services and then the database. Called by the pool
// when the last reference is released.
func (s *sharedState) Destruct() error {
	s.mu.Lock()
	order := slices.Clone(s.order)
	services := s.services
	s.services, s.order = map[string]any{}, nil
	s.mu.Unlock()

	var errs []error
	for i := len(order) - 1; i >= 0; i-- {
		if c, ok := services[order[i]].(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing %s: %w", order[i], err))
			}
		}
	}
	if err := s.Stores.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the storage: %w", err))
	}
	s.logger.Info("data directory closed", zap.String("data_dir", s.Dir))
	return errors.Join(errs...)
}

// acquireState takes a reference to the open state of dir, opening it
// through backend with encryption key key (nil: unencrypted) if no loaded
// config has. A
// config whose key differs from the one dir is open with is refused: the
// key of an open database cannot change.
func acquireState(dir string, key []byte, backend StorageBackend, logger *zap.Logger) (*sharedState, error) {
	v, _, err := statePool.LoadOrNew(dir, func() (caddy.Destructor, error) {
		return openState(dir, key, backend, logger)
	})
	if err != nil {
		return nil, err
	}
	st := v.(*sharedState)
	if st.keyID != encryptionKeyID(key) {
		if err := releaseState(dir); err != nil {
			logger.Error("releasing the data dir", zap.Error(err))
		}
		return nil, fmt.Errorf("encryption_key differs from the one the running configuration opened data dir %s with: the key of an open data dir cannot change; stop the gateway to change it", dir)
	}
	return st, nil
}

// encryptionKeyID identifies an encryption key without holding it.
func encryptionKeyID(key []byte) [32]byte {
	if len(key) == 0 {
		return [32]byte{}
	}
	return sha256.Sum256(key)
}

// pooledState returns the open state of dir held by any loaded config,
// without taking a reference, or nil.
func pooledState(dir string) *sharedState {
	var found *sharedState
	statePool.Range(func(k, v any) bool {
		if k == dir {
			found, _ = v.(*sharedState)
			return false
		}
		return true
	})
	return found
}

func releaseState(dir string) error {
	_, err := statePool.Delete(dir)
	return err
}

// openState opens dir through backend, first making it private to the
// gateway's user (datadir.Secure), encrypted under key when there is one.
func openState(dir string, key []byte, backend StorageBackend, logger *zap.Logger) (*sharedState, error) {
	found, err := datadir.Secure(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		logger.Warn("data directory was open to other users: it holds signing keys, webhook keys and the secret-hashing pepper",
			zap.String("path", f.Path), zap.String("mode", fmt.Sprintf("%#o", f.Was)), zap.Bool("tightened", f.Err == nil), zap.NamedError("error", f.Err))
	}
	stores, err := backend.OpenStores(dir, key, logger)
	if err != nil {
		return nil, err
	}
	logger.Info("data directory opened", zap.String("data_dir", dir), zap.Bool("encrypted", len(key) > 0))
	return &sharedState{Stores: stores, Dir: dir, logger: logger, keyID: encryptionKeyID(key), services: map[string]any{}}, nil
}

// badgerOptions are the database settings, defined once in
// internal/datadir (shared with the queue benchmark), logging through zap.
func badgerOptions(dir string, logger *zap.Logger) badger.Options {
	return datadir.Options(dir, badgerLogger{logger.Named("badger").Sugar()})
}

// badgerLogger adapts zap's sugared logger to badger.Logger, which wants
// Warningf.
type badgerLogger struct{ s *zap.SugaredLogger }

func (l badgerLogger) Errorf(f string, a ...any)   { l.s.Errorf(f, a...) }
func (l badgerLogger) Warningf(f string, a ...any) { l.s.Warnf(f, a...) }
func (l badgerLogger) Infof(f string, a ...any)    { l.s.Debugf(f, a...) } // Badger is chatty at info
func (l badgerLogger) Debugf(f string, a ...any)   { l.s.Debugf(f, a...) }

var _ badger.Logger = badgerLogger{}
