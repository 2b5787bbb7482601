package badgerstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Keys of the queue:
//
//	wh/due/<position>                          → delivery record (queued; webhooks.SchedulePos)
//	wh/dead/<delivery id>                      → delivery record (dead letter)
//	wh/dexp/<8-byte big-endian unix nanos><id> → "" (dead-letter expiry index)
//	wh/corrupt/<position>                      → a queued record that did not decode, set aside
//	wh/done/<subscription id>\x00<slot>        → position (uvarint length, bytes), delivery record (delivered)
//
// A queued delivery is one key: its schedule entry holds the record, so a
// delivery costs one write when queued and one delete when done, and the
// dispatcher reads it with the schedule scan (no second lookup).
const (
	duePrefix     = "wh/due/"
	deadPrefix    = "wh/dead/"
	deadExpPrefix = "wh/dexp/"
	corruptPrefix = "wh/corrupt/"
	donePrefix    = "wh/done/"
)

func dueKey(pos []byte) []byte {
	return append(append(make([]byte, 0, len(duePrefix)+len(pos)), duePrefix...), pos...)
}

// Enqueue writes entries in as few transactions as Badger allows, with in
// the last one.
func (s *webhookStore) Enqueue(entries []webhooks.QueueEntry, with webhooks.TxWrites) error {
	var extra func(*badger.Txn) error
	if with != nil {
		w, ok := with.(txWrites)
		if !ok {
			return fmt.Errorf("queueing deliveries: writes of backend %q given to a %s queue", with.Backend(), Backend)
		}
		extra = w.apply
	}
	keys := dueKeys(entries)
	for i, done := 0, false; !done; {
		n, last, err := s.enqueueChunk(entries[i:], keys[i:], extra)
		if err != nil {
			return err
		}
		i += n
		done = last
	}
	return nil
}

// dueKeys makes the schedule keys of entries in one allocation.
func dueKeys(entries []webhooks.QueueEntry) [][]byte {
	size := 0
	for _, e := range entries {
		size += len(duePrefix) + len(e.Pos)
	}
	buf := make([]byte, 0, size)
	keys := make([][]byte, len(entries))
	for i, e := range entries {
		start := len(buf)
		buf = append(append(buf, duePrefix...), e.Pos...)
		keys[i] = buf[start:len(buf):len(buf)]
	}
	return keys
}

// enqueueChunk writes as many of entries as fit in one transaction; when all
// of them fit it also runs extra there and reports last. It returns how many
// entries it wrote.
func (s *webhookStore) enqueueChunk(entries []webhooks.QueueEntry, keys [][]byte, extra func(*badger.Txn) error) (n int, last bool, err error) {
	for try := 0; ; try++ {
		txn := s.db.NewTransaction(true)
		n, err = fill(txn, entries, keys)
		last = err == nil && n == len(entries)
		if last && extra != nil {
			err = extra(txn)
			if errors.Is(err, badger.ErrTxnTooBig) && n > 0 {
				// extra does not fit beside the entries: commit part of
				// them now and run extra with the rest in a later one.
				txn.Discard()
				txn = s.db.NewTransaction(true)
				n, err = fill(txn, entries[:max(n/2, 1)], keys)
				last = false
			}
		}
		if err == nil && n == 0 && !last {
			err = errors.New("a delivery does not fit in a transaction")
		}
		if err != nil {
			txn.Discard()
			return 0, false, fmt.Errorf("queueing deliveries: %w", err)
		}
		err = txn.Commit()
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		if errors.Is(err, badger.ErrConflict) {
			err = fmt.Errorf("%w: %w", webhooks.ErrConflict, err)
		}
		if err != nil {
			return 0, false, fmt.Errorf("queueing deliveries: %w", err)
		}
		return n, last, nil
	}
}

// fill writes entries into txn until it is full; ErrTxnTooBig is not an
// error here, the count tells how many fit.
func fill(txn *badger.Txn, entries []webhooks.QueueEntry, keys [][]byte) (int, error) {
	for i := range entries {
		err := txn.Set(keys[i], entries[i].Record)
		if errors.Is(err, badger.ErrTxnTooBig) {
			return i, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return len(entries), nil
}

// ReadSchedule reads one snapshot; keys only, values when asked.
func (s *webhookStore) ReadSchedule() (webhooks.ScheduleReader, error) {
	txn := s.db.NewTransaction(false)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(duePrefix), PrefetchValues: false})
	return &scheduleReader{txn: txn, it: it}, nil
}

type scheduleReader struct {
	txn *badger.Txn
	it  *badger.Iterator
}

func (r *scheduleReader) Seek(pos []byte) { r.it.Seek(dueKey(pos)) }
func (r *scheduleReader) Valid() bool     { return r.it.Valid() }
func (r *scheduleReader) Next()           { r.it.Next() }
func (r *scheduleReader) Pos() []byte     { return r.it.Item().KeyCopy(nil)[len(duePrefix):] }
func (r *scheduleReader) Value(fn func([]byte) error) error {
	return r.it.Item().Value(fn)
}
func (r *scheduleReader) Close() {
	r.it.Close()
	r.txn.Discard()
}

// keyArena hands out keys carved from shared chunks, so the keys of a
// batch cost a few allocations, not one each. A key stays valid (Badger
// keeps it until the transaction ends): chunks are never reused.
type keyArena struct{ buf []byte }

// due returns the schedule key of pos.
func (a *keyArena) due(pos []byte) []byte {
	n := len(duePrefix) + len(pos)
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, 16<<10))
	}
	start := len(a.buf)
	a.buf = append(append(a.buf, duePrefix...), pos...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// settle applies one settlement to txn; slot is the delivered record's
// (SettleDone with a record).
func settle(txn *badger.Txn, st *webhooks.Settlement, slot uint32, keys *keyArena) error {
	err := txn.Delete(keys.due(st.Pos))
	if err != nil {
		return err
	}
	switch st.Kind {
	case webhooks.SettleRetry:
		return txn.Set(keys.due(st.Entry.Pos), st.Entry.Record)
	case webhooks.SettleDead:
		return errors.Join(
			txn.Set([]byte(deadPrefix+st.Entry.ID), st.Entry.Record),
			txn.Set(expKey(st.Entry.ID, st.Expires), nil))
	case webhooks.SettleDone:
		if st.Entry.Record != nil {
			return txn.Set(doneKey(st.Entry.SubscriptionID, slot), doneValue(&st.Entry))
		}
	}
	return nil
}

// Settle commits batch in as few transactions as fit. A settlement whose
// writes fail part-way (the transaction is full) is never committed with
// them: the transaction is rebuilt without it, since a committed delete
// of its old key without its new record would lose the delivery if the
// process died before the next transaction.
func (s *webhookStore) Settle(batch []webhooks.Settlement, done []bool) error {
	var errs []error
	keys := &keyArena{}
	slots, err := s.deliveredSlots(batch)
	if err != nil {
		return err
	}
	for i := 0; i < len(batch); {
		txn, j, err := s.settleTxn(batch[i:], slots[i:], keys)
		if err != nil {
			errs = append(errs, err)
		}
		j += i
		if j == i { // even one does not fit or failed: skip it
			i++
			continue
		}
		err = txn.Commit()
		if err != nil {
			errs = append(errs, fmt.Errorf("committing %d delivery outcomes: %w", j-i, err))
		}
		for k := i; k < j; k++ {
			done[k] = err == nil
		}
		i = j
	}
	return errors.Join(errs...)
}

// settleTxn returns a transaction holding the writes of the longest prefix
// of batch whose writes all succeed, and that prefix's length (0: no
// transaction), and the error that ended it, unless the transaction was
// merely full.
func (s *webhookStore) settleTxn(batch []webhooks.Settlement, slots []uint32, keys *keyArena) (*badger.Txn, int, error) {
	txn := s.db.NewTransaction(true)
	for j := range batch {
		err := settle(txn, &batch[j], slots[j], keys)
		if err == nil {
			continue
		}
		txn.Discard()
		var reported error
		if !errors.Is(err, badger.ErrTxnTooBig) || j == 0 {
			reported = fmt.Errorf("recording the outcome of delivery %s: %w", batch[j].Entry.ID, err)
		}
		if j == 0 {
			return nil, 0, reported
		}
		txn = s.db.NewTransaction(true)
		for k := range j { // these fitted before, so they fit again
			if err := settle(txn, &batch[k], slots[k], keys); err != nil {
				txn.Discard()
				return nil, 0, errors.Join(reported, fmt.Errorf("recording the outcome of delivery %s: %w", batch[k].Entry.ID, err))
			}
		}
		return txn, j, reported
	}
	return txn, len(batch), nil
}

// quarantineBatch is how many entries one quarantine transaction moves
// (two writes each, well inside Badger's transaction limit).
const quarantineBatch = 500

func (s *webhookStore) Quarantine(positions [][]byte) (int, error) {
	moved := 0
	for len(positions) > 0 {
		part := positions[:min(len(positions), quarantineBatch)]
		positions = positions[len(part):]
		n := 0
		err := update(s.db, func(txn *badger.Txn) error {
			n = 0
			for _, p := range part {
				item, err := txn.Get(dueKey(p))
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if err := errors.Join(txn.Set(append([]byte(corruptPrefix), p...), v), txn.Delete(dueKey(p))); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return moved, err
		}
		moved += n
	}
	return moved, nil
}

func (s *webhookStore) Depth() (queued, dead int64, err error) {
	if queued, err = countPrefix(s.db, duePrefix); err != nil {
		return 0, 0, err
	}
	dead, err = countPrefix(s.db, deadPrefix)
	return queued, dead, err
}

// Maintain runs Badger's value-log GC until it finds nothing to collect.
func (s *webhookStore) Maintain(ctx context.Context) {
	for ctx.Err() == nil && s.db.RunValueLogGC(0.5) == nil {
	}
}
