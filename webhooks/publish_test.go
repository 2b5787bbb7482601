package webhooks

import (
	"context"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// With the gateway's Badger settings a transaction holds at most about
// 300 KiB. A batch larger than that is split into several transactions, every
// delivery is queued, and extra runs exactly once, in the last one, so the
// feed's cursor is stored only once all of a page's deliveries are.
func TestPublishSplitsBatchesLargerThanATransaction(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := newService(t, testOptions(db, newFakeClock()))
	ctx := context.Background()
	for _, ev := range []string{EventShipmentShipped, EventLabelStatus} {
		if _, _, err := s.Subscriptions().Create(ctx, "p1", "http://127.0.0.1:9/"+ev, ev); err != nil {
			t.Fatal(err)
		}
	}
	const n = 3000 // one matching subscription each: 3,000 deliveries, about 750 KiB
	events := make([]Event, 0, n)
	for i := range n {
		name := EventShipmentShipped
		if i%2 == 1 {
			name = EventLabelStatus
		}
		events = append(events, Event{Name: name, Identifier: fmt.Sprintf("SHP-%06d-%0100d", i, i)})
	}
	extraRuns := 0
	queued, err := s.Publish("p1", events, func(txn *badger.Txn) error {
		extraRuns++
		// extra runs in the last transaction: earlier ones have committed
		// (the batch was split), and with this one's own writes every
		// delivery is visible.
		committed, _ := s.Depth()
		visible := countDue(t, txn)
		if committed == 0 || committed >= n || visible != n {
			return fmt.Errorf("extra saw %d committed and %d visible deliveries, want a split and all %d", committed, visible, n)
		}
		return txn.Set([]byte("test/cursor"), []byte("after-the-page"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if queued != n {
		t.Fatalf("queued %d deliveries, want %d", queued, n)
	}
	if depth, _ := s.Depth(); depth != n {
		t.Fatalf("queue depth %d, want %d", depth, n)
	}
	if extraRuns != 1 {
		t.Fatalf("extra ran %d times, want once", extraRuns)
	}
	if err := db.View(func(txn *badger.Txn) error { _, err := txn.Get([]byte("test/cursor")); return err }); err != nil {
		t.Fatalf("extra's write is missing: %v", err)
	}
}

// countDue counts the due deliveries txn sees: those committed before it
// and its own writes.
func countDue(t *testing.T, txn *badger.Txn) int {
	t.Helper()
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(duePrefix)})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n
}
