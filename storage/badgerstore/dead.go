package badgerstore

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// expKey is the expiry index key of dead letter id.
func expKey(id string, exp time.Time) []byte {
	k := make([]byte, 0, len(deadExpPrefix)+8+len(id))
	k = append(k, deadExpPrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(max(exp.UnixNano(), 0)))
	return append(k, id...)
}

// parseExpKey splits an expiry key into its time and id.
func parseExpKey(k []byte) (time.Time, string, bool) {
	return webhooks.ParseSchedulePos(k[len(deadExpPrefix):])
}

func (s *webhookStore) ScanDead(fn func(record []byte) (bool, error)) error {
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(deadExpPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			_, id, ok := parseExpKey(it.Item().Key())
			if !ok {
				continue
			}
			item, err := txn.Get([]byte(deadPrefix + id))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			} else if err != nil {
				return err
			}
			more := true
			if err := item.Value(func(v []byte) error {
				var err error
				more, err = fn(v)
				return err
			}); err != nil || !more {
				return err
			}
		}
		return nil
	})
}

func (s *webhookStore) GetDead(id string) ([]byte, error) {
	var v []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(deadPrefix + id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return webhooks.ErrNotFound
		} else if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	return v, err
}

// Revive moves items in transactions of as many as fit: one that is too big
// is dropped whole and retried with half as many (long attempt errors make
// records big).
func (s *webhookStore) Revive(items []webhooks.Revival) (int, error) {
	moved := 0
	for len(items) > 0 {
		limit := len(items)
		for {
			n := 0
			err := update(s.db, func(txn *badger.Txn) error {
				n = 0
				for _, r := range items[:limit] {
					if _, err := txn.Get([]byte(deadPrefix + r.ID)); errors.Is(err, badger.ErrKeyNotFound) {
						continue // revived or purged meanwhile
					} else if err != nil {
						return err
					}
					if err := errors.Join(txn.Delete([]byte(deadPrefix+r.ID)), txn.Delete(expKey(r.ID, r.Expires)),
						txn.Set(dueKey(r.Entry.Pos), r.Entry.Record)); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if errors.Is(err, badger.ErrTxnTooBig) && limit > 1 {
				limit /= 2
				continue
			}
			if err != nil {
				return moved, err
			}
			moved += n
			items = items[limit:]
			break
		}
	}
	return moved, nil
}

// purgeBatch is how many expired dead letters one purge transaction deletes
// at most (two deletes each); halved when they do not fit.
const purgeBatch = 2000

func (s *webhookStore) PurgeDead(now time.Time, limit int) (int, error) {
	total, most := 0, purgeBatch
	for total < limit {
		batch := min(limit-total, most)
		n, more := 0, false
		err := update(s.db, func(txn *badger.Txn) error {
			n, more = 0, false
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(deadExpPrefix)})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				exp, id, ok := parseExpKey(it.Item().Key())
				if !ok {
					continue
				}
				if exp.After(now) {
					return nil
				}
				if n == batch {
					more = true
					return nil
				}
				if err := errors.Join(txn.Delete(it.Item().KeyCopy(nil)), txn.Delete([]byte(deadPrefix+id))); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if errors.Is(err, badger.ErrTxnTooBig) && batch > 1 {
			most = batch / 2 // try again with half
			continue
		}
		if err != nil {
			return total, err
		}
		total += n
		if !more {
			break
		}
	}
	return total, nil
}
