// Package badgerstore is the Badger backend of the storage seam: it
// implements tokens.Store, webhooks.Storage, feed.Store and portal.Store over one open
// Badger database (opened by internal/datadir with SyncWrites on). The key
// layout is docs/dev/storage.md's.
package badgerstore

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Backend is the name TxWrites of this backend give.
const Backend = "badger"

// Store holds the stores of one database. It does not own the database:
// the caller closes it after the services using the stores are closed.
type Store struct {
	db       *badger.DB
	tokens   *tokenStore
	webhooks *webhookStore
	portal   *portalStore
}

// New returns the stores of db.
func New(db *badger.DB) *Store {
	return &Store{db: db, tokens: &tokenStore{db: db}, webhooks: &webhookStore{db: db}, portal: &portalStore{db: db}}
}

// DB returns the database.
func (s *Store) DB() *badger.DB { return s.db }

// Tokens returns the token service's store (the same at every call).
func (s *Store) Tokens() tokens.Store { return s.tokens }

// Webhooks returns the webhook service's store (the same at every call).
func (s *Store) Webhooks() webhooks.Storage { return s.webhooks }

// Feed returns the store of feed name (a valid feed name: feed.ValidName).
func (s *Store) Feed(name string) feed.Store {
	return &feedStore{db: s.db, name: name, prefix: "feed/" + name + "/"}
}

// maxConflictRetries bounds the retries of a transaction that conflicts.
const maxConflictRetries = 16

// update runs fn in an update transaction, again when it conflicts (up to
// maxConflictRetries times); a final conflict is webhooks.ErrConflict.
func update(db *badger.DB, fn func(txn *badger.Txn) error) error {
	var err error
	for range maxConflictRetries + 1 {
		if err = db.Update(fn); !errors.Is(err, badger.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", webhooks.ErrConflict, err)
}

// txWrites are this backend's webhooks.TxWrites: writes applied to a
// transaction.
type txWrites struct {
	apply func(txn *badger.Txn) error
}

func (txWrites) Backend() string { return Backend }

// eachJSON decodes every value under prefix into a T and calls f with it.
func eachJSON[T any](txn *badger.Txn, prefix string, f func(*T) error) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix), PrefetchValues: true, PrefetchSize: 100})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return err
		}
		r := new(T)
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("decoding %s: %w", it.Item().Key(), err)
		}
		if err := f(r); err != nil {
			return err
		}
	}
	return nil
}

// listJSON returns every value under prefix decoded into a T.
func listJSON[T any](db *badger.DB, prefix string) ([]T, error) {
	var out []T
	err := db.View(func(txn *badger.Txn) error {
		return eachJSON(txn, prefix, func(r *T) error { out = append(out, *r); return nil })
	})
	return out, err
}

func setJSON(txn *badger.Txn, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set([]byte(key), b)
}

// countPrefix counts the keys under prefix.
func countPrefix(db *badger.DB, prefix string) (int64, error) {
	var n int64
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n, err
}
