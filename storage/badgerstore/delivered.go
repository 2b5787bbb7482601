package badgerstore

import (
	"bytes"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// doneSubPrefix is the key prefix of subscription sub's delivered records.
func doneSubPrefix(sub string) []byte {
	return append(append([]byte(donePrefix), sub...), 0)
}

// doneSubEnd is the first key past subscription sub's delivered records
// (a reverse iteration seeks there to start at the latest).
func doneSubEnd(sub string) []byte {
	return append(append([]byte(donePrefix), sub...), 1)
}

func (s *webhookStore) ScanDelivered(sub string, fn func(record []byte) (bool, error)) error {
	prefix := doneSubPrefix(sub)
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: false})
		defer it.Close()
		for it.Seek(doneSubEnd(sub)); it.Valid(); it.Next() {
			more := true
			if err := it.Item().Value(func(v []byte) error {
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

// trimBatch is how many delivered records one trim transaction deletes at
// most.
const trimBatch = 1000

func (s *webhookStore) TrimDelivered(sub string, keep int, before time.Time) (int, error) {
	prefix := doneSubPrefix(sub)
	cutoff := webhooks.SchedulePos(before, "")
	total := 0
	for {
		n := 0
		err := update(s.db, func(txn *badger.Txn) error {
			n = 0
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: false})
			defer it.Close()
			seen := 0
			for it.Seek(doneSubEnd(sub)); it.Valid() && n < trimBatch; it.Next() {
				k := it.Item().Key()
				seen++
				if seen <= keep && bytes.Compare(k[len(prefix):], cutoff) >= 0 {
					continue
				}
				if err := txn.Delete(it.Item().KeyCopy(nil)); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < trimBatch {
			return total, nil
		}
	}
}

func (s *webhookStore) DeliveredSubscriptions() ([]string, error) {
	var subs []string
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(donePrefix), PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			rest := it.Item().Key()[len(donePrefix):]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				it.Next()
				continue
			}
			sub := string(rest[:i])
			subs = append(subs, sub)
			it.Seek(doneSubEnd(sub))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing delivered records: %w", err)
	}
	return subs, nil
}
