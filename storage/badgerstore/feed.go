package badgerstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// feedStore is feed.Store. Keys of a feed, all under "feed/<name>/":
//
//	cursor             the cursor to read after
//	done/<change id>   a seen marker; expires (Badger's own TTL, by wall
//	                   clock) after the dedupe window
//	rejected/<slot>    the last MaxRejected rejected changes, a ring of slots
//	rejected-total     how many changes were ever rejected (uint64)
type feedStore struct {
	db     *badger.DB
	name   string
	prefix string
}

func (s *feedStore) key(parts ...string) []byte {
	k := s.prefix
	for _, p := range parts {
		k += p
	}
	return []byte(k)
}

func (s *feedStore) Cursor() (string, error) {
	var c string
	err := s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(s.key("cursor"))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { c = string(v); return nil })
	})
	return c, err
}

func (s *feedStore) Seen(ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			_, err := txn.Get(s.key("done/", id))
			if err == nil {
				out[id] = true
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
		}
		return nil
	})
	return out, err
}

func (s *feedStore) Rejected() ([]feed.Rejected, uint64, error) {
	var out []feed.Rejected
	var total uint64
	err := s.db.View(func(txn *badger.Txn) error {
		if it, err := txn.Get(s.key("rejected-total")); err == nil {
			if err := it.Value(func(v []byte) error {
				if len(v) == 8 {
					total = binary.BigEndian.Uint64(v)
				}
				return nil
			}); err != nil {
				return err
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		opts := badger.DefaultIteratorOptions
		opts.Prefix = s.key("rejected/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var r feed.Rejected
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &r) }); err != nil {
				continue // a damaged entry is not worth failing over
			}
			out = append(out, r)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, total, err
}

func (s *feedStore) PageWrites(w feed.PageWrites) webhooks.TxWrites {
	return txWrites{apply: func(txn *badger.Txn) error { return s.apply(txn, &w) }}
}

func (s *feedStore) apply(txn *badger.Txn, w *feed.PageWrites) error {
	if err := checkFence(s.name, w.Fence); err != nil {
		return err
	}
	for _, id := range w.Seen {
		e := badger.NewEntry(s.key("done/", id), nil)
		e.ExpiresAt = uint64(max(w.SeenUntil.Unix(), 1))
		if err := txn.SetEntry(e); err != nil {
			return err
		}
	}
	if len(w.Rejected) > 0 {
		rs := w.Rejected
		if len(rs) > feed.MaxRejected {
			rs = rs[len(rs)-feed.MaxRejected:]
		}
		for _, r := range rs {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := txn.Set(s.key(fmt.Sprintf("rejected/%03d", r.Seq%feed.MaxRejected)), b); err != nil {
				return err
			}
		}
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], w.RejectedTotal)
		if err := txn.Set(s.key("rejected-total"), n[:]); err != nil {
			return err
		}
	}
	if w.Cursor != nil {
		return txn.Set(s.key("cursor"), []byte(*w.Cursor))
	}
	return nil
}

func (s *feedStore) Commit(w webhooks.TxWrites) error {
	tw, ok := w.(txWrites)
	if !ok {
		return fmt.Errorf("feed: writes of backend %q given to a %s store", w.Backend(), Backend)
	}
	return update(s.db, tw.apply)
}

func (s *feedStore) ForgetSeen() error {
	return s.db.DropPrefix(s.key("done/"))
}
