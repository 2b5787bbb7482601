package feed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Badger keys of a feed, all under "feed/<name>/":
//
//	cursor             the cursor to read after (the "next" of the last
//	                   page whose changes are all done)
//	done/<change id>   a change that has been turned into events (or
//	                   rejected); expires after the dedupe window
//	rejected/<slot>    the last MaxRejected rejected changes, a ring of slots
//	rejected-total     how many changes were ever rejected (uint64)
type store struct {
	db     *badger.DB
	prefix string
}

// MaxRejected is how many rejected changes a feed keeps to show.
const MaxRejected = 100

func newStore(db *badger.DB, name string) store {
	return store{db: db, prefix: "feed/" + name + "/"}
}

func (s store) key(parts ...string) []byte {
	k := s.prefix
	for _, p := range parts {
		k += p
	}
	return []byte(k)
}

func (s store) doneKey(id string) []byte { return s.key("done/", id) }

// cursor returns the stored cursor ("" before the first page).
func (s store) cursor() (string, error) {
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

func (s store) setCursor(txn *badger.Txn, c string) error {
	return txn.Set(s.key("cursor"), []byte(c))
}

// done reports which of ids are already done.
func (s store) done(ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			_, err := txn.Get(s.doneKey(id))
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

// markDone records ids as done until expires (Badger's own TTL, so the set
// of remembered ids stays bounded by the dedupe window).
func (s store) markDone(txn *badger.Txn, ids []string, expires time.Time) error {
	for _, id := range ids {
		e := badger.NewEntry(s.doneKey(id), nil)
		e.ExpiresAt = uint64(expires.Unix())
		if err := txn.SetEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// Rejected is one change that was skipped because it could not be turned
// into events.
type Rejected struct {
	Seq        uint64    `json:"seq"`
	ChangeID   string    `json:"change_id,omitempty"`
	Partner    string    `json:"partner,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Change     string    `json:"change,omitempty"`
	Reason     string    `json:"reason"`
	Source     string    `json:"source"` // "poll" or "push"
	RejectedAt time.Time `json:"rejected_at"`
	Raw        string    `json:"raw,omitempty"` // the change as received, cut at 512 bytes
}

// addRejected numbers rs after total and writes them into their ring slots.
// Only the last MaxRejected are written (older ones would be overwritten).
func (s store) addRejected(txn *badger.Txn, total uint64, rs []Rejected) error {
	if len(rs) > MaxRejected {
		rs = rs[len(rs)-MaxRejected:]
	}
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := txn.Set(s.key(fmt.Sprintf("rejected/%03d", r.Seq%MaxRejected)), b); err != nil {
			return err
		}
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], total)
	return txn.Set(s.key("rejected-total"), n[:])
}

// rejected loads the kept rejected changes, oldest first, and the total.
func (s store) rejected() ([]Rejected, uint64, error) {
	var out []Rejected
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
			var r Rejected
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
