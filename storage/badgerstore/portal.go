package badgerstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/portal"
)

// Keys of the portal's state, all under "portal/". Audit keys sort by
// time: the Unix nanoseconds in 20 digits, then a counter that keeps
// records of the same nanosecond apart.
const (
	prefixPortalLink    = "portal/link/"
	prefixPortalSession = "portal/session/"
	prefixPortalAudit   = "portal/audit/"
)

// portalStore is portal.Store; records are JSON.
type portalStore struct {
	db  *badger.DB
	seq atomic.Uint64
}

// Portal returns the portal's store (the same at every call).
func (s *Store) Portal() portal.Store { return s.portal }

func (s *portalStore) PutLink(l portal.LinkRecord) error {
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, prefixPortalLink+l.ID, l) })
}

func (s *portalStore) Link(id string) (portal.LinkRecord, error) {
	var l portal.LinkRecord
	return l, getJSON(s.db, prefixPortalLink+id, &l)
}

func (s *portalStore) DeleteLink(id string) error { return deleteExisting(s.db, prefixPortalLink+id) }

func (s *portalStore) Links() ([]portal.LinkRecord, error) {
	return listJSON[portal.LinkRecord](s.db, prefixPortalLink)
}

func (s *portalStore) PutSession(r portal.SessionRecord) error {
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, prefixPortalSession+r.ID, r) })
}

func (s *portalStore) Session(id string) (portal.SessionRecord, error) {
	var r portal.SessionRecord
	return r, getJSON(s.db, prefixPortalSession+id, &r)
}

func (s *portalStore) TouchSession(id string, at time.Time) error {
	return update(s.db, func(txn *badger.Txn) error {
		var r portal.SessionRecord
		if err := getJSONTxn(txn, prefixPortalSession+id, &r); err != nil {
			return err
		}
		r.LastSeen = at
		return setJSON(txn, prefixPortalSession+id, r)
	})
}

func (s *portalStore) DeleteSession(id string) error {
	return deleteExisting(s.db, prefixPortalSession+id)
}

func (s *portalStore) Sessions() ([]portal.SessionRecord, error) {
	return listJSON[portal.SessionRecord](s.db, prefixPortalSession)
}

func (s *portalStore) AppendAudit(r portal.AuditRecord) error {
	key := fmt.Sprintf("%s%020d-%016x", prefixPortalAudit, r.At.UnixNano(), s.seq.Add(1))
	return update(s.db, func(txn *badger.Txn) error { return setJSON(txn, key, r) })
}

func (s *portalStore) Audit(partner string, since time.Time, limit int) ([]portal.AuditRecord, error) {
	out := []portal.AuditRecord{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixPortalAudit), Reverse: true, PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		// In reverse, seek to the last key under the prefix.
		for it.Seek([]byte(prefixPortalAudit + "~")); it.Valid() && len(out) < limit; it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			var r portal.AuditRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decoding %s: %w", it.Item().Key(), err)
			}
			if r.At.Before(since) {
				return nil
			}
			if partner == "" || r.Partner == partner {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

func (s *portalStore) DeleteAuditBefore(t time.Time) error {
	end := []byte(fmt.Sprintf("%s%020d", prefixPortalAudit, t.UnixNano()))
	var keys [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixPortalAudit)})
		defer it.Close()
		for it.Rewind(); it.Valid() && string(it.Item().Key()) < string(end); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		batch := keys[:n]
		if err := update(s.db, func(txn *badger.Txn) error {
			for _, k := range batch {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// getJSON decodes the value of key into v; portal.ErrNotFound when there
// is none.
func getJSON(db *badger.DB, key string, v any) error {
	return db.View(func(txn *badger.Txn) error { return getJSONTxn(txn, key, v) })
}

func getJSONTxn(txn *badger.Txn, key string, v any) error {
	item, err := txn.Get([]byte(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return portal.ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

// deleteExisting deletes key; portal.ErrNotFound when it is not there (in
// the same transaction, so of two deletions one fails).
func deleteExisting(db *badger.DB, key string) error {
	return update(db, func(txn *badger.Txn) error {
		if _, err := txn.Get([]byte(key)); errors.Is(err, badger.ErrKeyNotFound) {
			return portal.ErrNotFound
		} else if err != nil {
			return err
		}
		return txn.Delete([]byte(key))
	})
}
