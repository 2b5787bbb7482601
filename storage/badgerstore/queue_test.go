package badgerstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// bigEntry is a queue entry whose record is size bytes.
func bigEntry(i, size int) webhooks.QueueEntry {
	id := fmt.Sprintf("whd_%06d", i)
	return webhooks.QueueEntry{Pos: webhooks.SchedulePos(t0, id), ID: id, PartnerID: "p1", Record: make([]byte, size)}
}

// With the gateway's Badger settings a transaction holds at most about
// 300 KiB. A batch larger than that is split into several transactions,
// every entry is queued, and the writes given run exactly once, in the last
// one, so a feed's cursor is stored only once all of a page's deliveries
// are.
func TestEnqueueSplitsBatchesLargerThanATransaction(t *testing.T) {
	db := openDB(t)
	st := New(db).Webhooks()
	const n = 3000 // about 750 KiB
	entries := make([]webhooks.QueueEntry, n)
	for i := range entries {
		entries[i] = bigEntry(i, 250)
	}
	runs := 0
	with := txWrites{apply: func(txn *badger.Txn) error {
		runs++
		// It runs in the last transaction: earlier ones have committed (the
		// batch was split), and with this one's own writes every entry is
		// visible.
		committed := countPrefixT(t, db, duePrefix)
		visible := 0
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(duePrefix)})
		for it.Rewind(); it.Valid(); it.Next() {
			visible++
		}
		it.Close()
		if committed == 0 || committed >= n || visible != n {
			return fmt.Errorf("the writes saw %d committed and %d visible entries, want a split and all %d", committed, visible, n)
		}
		return txn.Set([]byte("test/cursor"), []byte("after-the-page"))
	}}
	if err := st.Enqueue(entries, with); err != nil {
		t.Fatal(err)
	}
	if got := countPrefixT(t, db, duePrefix); got != n {
		t.Fatalf("%d entries queued, want %d", got, n)
	}
	if runs != 1 {
		t.Fatalf("the writes ran %d times, want once", runs)
	}
	if countPrefixT(t, db, "test/cursor") != 1 {
		t.Fatal("the writes' own write is missing")
	}
}

// Writes that fail leave nothing queued: the deliveries and the writes are
// one transaction.
func TestEnqueueWithFailingWritesQueuesNothing(t *testing.T) {
	db := openDB(t)
	boom := errors.New("boom")
	with := txWrites{apply: func(txn *badger.Txn) error {
		if err := txn.Set([]byte("test/cursor"), []byte("c1")); err != nil {
			return err
		}
		return boom
	}}
	if err := New(db).Webhooks().Enqueue([]webhooks.QueueEntry{bigEntry(1, 10)}, with); !errors.Is(err, boom) {
		t.Fatalf("Enqueue with failing writes: %v, want boom", err)
	}
	if n := countPrefixT(t, db, duePrefix) + countPrefixT(t, db, "test/"); n != 0 {
		t.Fatalf("%d keys written although the writes failed, want none", n)
	}
}

// A batch of settlements bigger than one transaction is committed in
// parts, and no part holds half of one: an old schedule key is deleted only
// in the transaction that writes the delivery's new record.
func TestSettleNeverSplitsASettlement(t *testing.T) {
	db := openDB(t)
	st := New(db).Webhooks().(*webhookStore)
	longLog := []byte(strings.Repeat("dial tcp: lookup very-long-host-name.example: no such host; ", 800)) // ≈ 48 KB
	var batch []webhooks.Settlement
	for i := range 40 {
		old := bigEntry(i, 100)
		if err := st.Enqueue([]webhooks.QueueEntry{old}, nil); err != nil {
			t.Fatal(err)
		}
		next := old
		next.Pos, next.Record = webhooks.SchedulePos(t0.Add(time.Minute), old.ID), longLog
		batch = append(batch, webhooks.Settlement{Pos: old.Pos, Kind: webhooks.SettleRetry, Entry: next})
	}
	for i := 0; i < len(batch); {
		txn, j, err := st.settleTxn(batch[i:], make([]uint32, len(batch)-i), &keyArena{})
		if err != nil || j == 0 {
			t.Fatalf("settlement %d does not fit alone: %v", i, err)
		}
		if j == len(batch)-i && i == 0 {
			t.Fatal("the batch fitted one transaction: the test proves nothing")
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		i += j
		if err := db.View(func(txn *badger.Txn) error {
			for _, r := range batch[i:] {
				if _, err := txn.Get(dueKey(r.Pos)); err != nil {
					return fmt.Errorf("%s: old key gone before its new record was written: %v", r.Entry.ID, err)
				}
			}
			for _, r := range batch[:i] {
				if _, err := txn.Get(dueKey(r.Entry.Pos)); err != nil {
					return fmt.Errorf("%s: new record missing: %v", r.Entry.ID, err)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Settle commits a batch bigger than one transaction whole, in parts.
func TestSettleBigBatch(t *testing.T) {
	db := openDB(t)
	st := New(db).Webhooks()
	const n = 3000
	entries := make([]webhooks.QueueEntry, n)
	batch := make([]webhooks.Settlement, n)
	for i := range entries {
		entries[i] = bigEntry(i, 10)
		next := entries[i]
		next.Pos, next.Record = webhooks.SchedulePos(t0.Add(time.Minute), next.ID), make([]byte, 200)
		batch[i] = webhooks.Settlement{Pos: entries[i].Pos, Kind: webhooks.SettleRetry, Entry: next}
	}
	if err := st.Enqueue(entries, nil); err != nil {
		t.Fatal(err)
	}
	done := make([]bool, n)
	if err := st.Settle(batch, done); err != nil {
		t.Fatal(err)
	}
	for i, ok := range done {
		if !ok {
			t.Fatalf("settlement %d not committed", i)
		}
	}
	if got := countPrefixT(t, db, duePrefix); got != n {
		t.Fatalf("%d entries queued after re-scheduling all, want %d", got, n)
	}
}

// Thousands of undecodable entries are set aside under wh/corrupt/, in
// several transactions, none lost.
func TestQuarantineKeepsEntriesAside(t *testing.T) {
	db := openDB(t)
	st := New(db).Webhooks()
	const n = 2500 // × 2 writes: more than one transaction holds
	entries := make([]webhooks.QueueEntry, n)
	pos := make([][]byte, n)
	for i := range entries {
		entries[i] = bigEntry(i, 3)
		pos[i] = entries[i].Pos
	}
	if err := st.Enqueue(entries, nil); err != nil {
		t.Fatal(err)
	}
	moved, err := st.Quarantine(pos)
	if err != nil || moved != n {
		t.Fatalf("Quarantine = %d, %v; want %d", moved, err, n)
	}
	if got := countPrefixT(t, db, corruptPrefix); got != n {
		t.Fatalf("%d entries kept under %s, want %d", got, corruptPrefix, n)
	}
	if got := countPrefixT(t, db, duePrefix); got != 0 {
		t.Fatalf("%d entries left in the schedule, want 0", got)
	}
}
