package badgerstore

import (
	"bytes"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// loadDeadChunk is how many dead letters one transaction stores (two keys
// each, well inside the transaction limit for records of a few KiB).
const loadDeadChunk = 100

// LoadDead stores the dead letters, loadDeadChunk per transaction.
func (s *webhookStore) LoadDead(letters []webhooks.DeadLetter) error {
	for start := 0; start < len(letters); start += loadDeadChunk {
		chunk := letters[start:min(start+loadDeadChunk, len(letters))]
		err := update(s.db, func(txn *badger.Txn) error {
			for _, d := range chunk {
				if err := txn.Set([]byte(deadPrefix+d.ID), d.Record); err != nil {
					return err
				}
				if err := txn.Set(expKey(d.ID, d.Expires), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("loading dead letters: %w", err)
		}
	}
	return nil
}

// feedPrefix is the prefix of every feed's keys: feed/<name>/...
const feedPrefix = "feed/"

// FeedNames lists the feeds with any key (expired seen markers are not
// keys any more). Feed names never hold a slash.
func (s *Store) FeedNames() ([]string, error) {
	var names []string
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(feedPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			rest := it.Item().Key()[len(feedPrefix):]
			i := bytes.IndexByte(rest, '/')
			if i <= 0 {
				it.Next()
				continue
			}
			name := string(rest[:i])
			names = append(names, name)
			it.Seek([]byte(feedPrefix + name + "0")) // '0' sorts right after '/'
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the feeds: %w", err)
	}
	return names, nil
}

// ScanSeen reads the feed's seen markers; their expiry is Badger's TTL,
// whole seconds.
func (s *feedStore) ScanSeen(fn func(changeID string, until time.Time) error) error {
	prefix := s.key("done/")
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			until := time.Unix(int64(item.ExpiresAt()), 0).UTC()
			if err := fn(string(item.Key()[len(prefix):]), until); err != nil {
				return err
			}
		}
		return nil
	})
}
