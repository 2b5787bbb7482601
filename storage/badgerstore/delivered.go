package badgerstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// A subscription's delivered records live in a ring of Settlement.Keep
// slots: the next record overwrites the slot written longest ago. So the
// delivery path writes one key per delivery and never deletes (deletes
// would leave tombstones that every later scan of the subscription walks),
// and the records stay bounded without a trim. Each value starts with the
// record's position, which orders a scan. Which slot is next lives in
// memory (the data dir has one process); it is found again after a
// restart from the positions in the slots.

// rings holds the next slot of each subscription seen since the start.
type rings struct {
	mu   sync.Mutex
	next map[string]uint32
}

func doneKey(sub string, slot uint32) []byte {
	return binary.BigEndian.AppendUint32(doneSubPrefix(sub), slot)
}

// doneSubPrefix is the key prefix of subscription sub's delivered records.
func doneSubPrefix(sub string) []byte {
	return append(append([]byte(donePrefix), sub...), 0)
}

// doneValue is e's stored value: its position, then its record.
func doneValue(e *webhooks.QueueEntry) []byte {
	v := make([]byte, 0, binary.MaxVarintLen32+len(e.Pos)+len(e.Record))
	v = binary.AppendUvarint(v, uint64(len(e.Pos)))
	return append(append(v, e.Pos...), e.Record...)
}

// splitDone splits a stored value into position and record.
func splitDone(v []byte) (pos, record []byte, ok bool) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return nil, nil, false
	}
	return v[w : w+int(n)], v[w+int(n):], true
}

// doneRecord is one stored delivered record.
type doneRecord struct {
	key, pos, record []byte
}

// readDone reads sub's delivered records in txn, latest position first.
func readDone(txn *badger.Txn, sub string) ([]doneRecord, error) {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: doneSubPrefix(sub)})
	defer it.Close()
	var out []doneRecord
	for it.Rewind(); it.Valid(); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		pos, rec, ok := splitDone(v)
		if !ok {
			continue // not written by this store: left alone
		}
		out = append(out, doneRecord{key: it.Item().KeyCopy(nil), pos: pos, record: rec})
	}
	slices.SortFunc(out, func(a, b doneRecord) int { return bytes.Compare(b.pos, a.pos) })
	return out, nil
}

// deliveredSlots gives each delivered record of batch its slot (the others
// 0), advancing the subscriptions' rings.
func (s *webhookStore) deliveredSlots(batch []webhooks.Settlement) ([]uint32, error) {
	slots := make([]uint32, len(batch))
	s.rings.mu.Lock()
	defer s.rings.mu.Unlock()
	for i := range batch {
		st := &batch[i]
		if st.Kind != webhooks.SettleDone || st.Entry.Record == nil {
			continue
		}
		size := uint32(max(st.Keep, 1))
		sub := st.Entry.SubscriptionID
		next, ok := s.rings.next[sub]
		if !ok {
			var err error
			if next, err = s.findNextSlot(sub, size); err != nil {
				return nil, fmt.Errorf("finding the delivery log slot of %s: %w", sub, err)
			}
		}
		if next >= size {
			next = 0
		}
		slots[i] = next
		if s.rings.next == nil {
			s.rings.next = map[string]uint32{}
		}
		s.rings.next[sub] = next + 1
	}
	return slots, nil
}

// findNextSlot is the slot after the one holding sub's latest record, in
// a ring of size slots. Records in slots past the ring (a loaded log, or a
// smaller Keep than before) would outlive newer ones the ring overwrites,
// so the latest size records are first moved into slots 0 on, oldest
// first, and the others deleted.
func (s *webhookStore) findNextSlot(sub string, size uint32) (uint32, error) {
	var next uint32
	err := update(s.db, func(txn *badger.Txn) error {
		next = 0
		recs, err := readDone(txn, sub)
		if err != nil || len(recs) == 0 {
			return err
		}
		if !slices.ContainsFunc(recs, func(r doneRecord) bool { return doneSlot(r.key) >= size }) {
			next = doneSlot(recs[0].key) + 1
			return nil
		}
		for _, r := range recs {
			if err := txn.Delete(r.key); err != nil {
				return err
			}
		}
		kept := recs[:min(len(recs), int(size))]
		for i := range kept {
			r := kept[len(kept)-1-i]
			e := webhooks.QueueEntry{Pos: r.pos, Record: r.record}
			if err := txn.Set(doneKey(sub, uint32(i)), doneValue(&e)); err != nil {
				return err
			}
		}
		next = uint32(len(kept))
		return nil
	})
	return next, err
}

// doneSlot is the slot of a delivered record's key.
func doneSlot(key []byte) uint32 { return binary.BigEndian.Uint32(key[len(key)-4:]) }

func (s *webhookStore) ScanDelivered(sub string, fn func(record []byte) (bool, error)) error {
	var recs []doneRecord
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		recs, err = readDone(txn, sub)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading delivered records of %s: %w", sub, err)
	}
	for _, r := range recs {
		if more, err := fn(r.record); err != nil || !more {
			return err
		}
	}
	return nil
}

func (s *webhookStore) TrimDelivered(sub string, keep int, before time.Time) (int, error) {
	cutoff := webhooks.SchedulePos(before, "")
	n := 0
	err := update(s.db, func(txn *badger.Txn) error {
		n = 0
		recs, err := readDone(txn, sub)
		if err != nil {
			return err
		}
		for i, r := range recs {
			if i < keep && bytes.Compare(r.pos, cutoff) >= 0 {
				continue
			}
			if err := txn.Delete(r.key); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("trimming delivered records of %s: %w", sub, err)
	}
	if keep <= 0 {
		s.rings.mu.Lock()
		delete(s.rings.next, sub)
		s.rings.mu.Unlock()
	}
	return n, nil
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
			it.Seek(append(append([]byte(donePrefix), sub...), 1)) // past sub's records
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing delivered records: %w", err)
	}
	return subs, nil
}

// loadDeliveredChunk is how many delivered records one transaction of
// LoadDelivered stores (one key each, records of a few KiB).
const loadDeliveredChunk = 200

// LoadDelivered puts each subscription's records in slots after the
// highest it uses, oldest position first, so the ring goes on from the
// latest: its next slot is then found from the positions, as after a
// restart.
func (s *webhookStore) LoadDelivered(entries []webhooks.QueueEntry) error {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b webhooks.QueueEntry) int {
		if c := strings.Compare(a.SubscriptionID, b.SubscriptionID); c != 0 {
			return c
		}
		return bytes.Compare(a.Pos, b.Pos)
	})
	s.rings.mu.Lock()
	defer s.rings.mu.Unlock()
	next := map[string]uint32{}
	slots := make([]uint32, len(sorted))
	for i, e := range sorted {
		sub := e.SubscriptionID
		if _, ok := next[sub]; !ok {
			free, err := s.freeSlot(sub)
			if err != nil {
				return fmt.Errorf("loading delivered records of %s: %w", sub, err)
			}
			next[sub] = free
		}
		slots[i] = next[sub]
		next[sub]++
	}
	for start := 0; start < len(sorted); start += loadDeliveredChunk {
		end := min(start+loadDeliveredChunk, len(sorted))
		err := update(s.db, func(txn *badger.Txn) error {
			for i := start; i < end; i++ {
				if err := txn.Set(doneKey(sorted[i].SubscriptionID, slots[i]), doneValue(&sorted[i])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("loading %d delivered records: %w", end-start, err)
		}
	}
	for sub := range next {
		delete(s.rings.next, sub)
	}
	return nil
}

// freeSlot is the slot after the highest of sub's slots in use (0: none).
func (s *webhookStore) freeSlot(sub string) (uint32, error) {
	var free uint32
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := doneSubPrefix(sub)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if k := it.Item().Key(); len(k) == len(prefix)+4 {
				free = max(free, binary.BigEndian.Uint32(k[len(prefix):])+1)
			}
		}
		return nil
	})
	return free, err
}
