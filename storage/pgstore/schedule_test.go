package pgstore

import (
	"fmt"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func TestTheScheduleReaderPagesThroughEveryEntryInOrder(t *testing.T) {
	s := New(migratedPool(t))
	const n = 2*schedulePage + 17
	var es []webhooks.QueueEntry
	for i := n - 1; i >= 0; i-- {
		es = append(es, due(fmt.Sprintf("whd_%04d", i), "P1", t0))
	}
	if err := s.Webhooks().Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
	r, err := s.Webhooks().ReadSchedule()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	i := 0
	for r.Seek(nil); r.Valid(); r.Next() {
		want := fmt.Sprintf("record of whd_%04d", i)
		if err := r.Value(func(v []byte) error {
			if string(v) != want {
				return fmt.Errorf("entry %d is %q, want %q", i, v, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		i++
	}
	if err := r.(*scheduleReader).Err(); err != nil || i != n {
		t.Fatalf("read %d entries (%v), want all %d over several pages", i, err, n)
	}
}

func TestAScheduleReaderOnAClosedPoolSaysWhy(t *testing.T) {
	pool := migratedPool(t)
	s := New(pool)
	if err := s.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	r, err := s.Webhooks().ReadSchedule()
	if err != nil {
		t.Fatal(err)
	}
	r.Seek(nil)
	if r.Valid() {
		t.Fatal("a reader whose database is gone is Valid, want it to stop")
	}
	if err := r.(*scheduleReader).Err(); err == nil {
		t.Fatal("the reader's Err is nil, want why it stopped")
	}
}
