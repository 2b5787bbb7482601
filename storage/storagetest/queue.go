package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// foreignWrites are writes of no backend.
type foreignWrites struct{}

func (foreignWrites) Backend() string { return "none" }

func enqueue(t *testing.T, b Backend, es ...webhooks.QueueEntry) {
	t.Helper()
	if err := b.Webhooks.Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
}

func depth(t *testing.T, b Backend, queued, dead int64) {
	t.Helper()
	q, d, err := b.Webhooks.Depth()
	if err != nil || q != queued || d != dead {
		t.Fatalf("Depth() = %d queued, %d dead, %v; want %d, %d", q, d, err, queued, dead)
	}
}

func schedule(t *testing.T, b Backend, want ...webhooks.QueueEntry) {
	t.Helper()
	got, err := readAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameStrings(records(got), recordsOf(want...)); err != nil {
		t.Fatalf("schedule: %v", err)
	}
}

var queueBehaviours = []Behaviour{
	{"queue/entries are read in position order and survive a restart", func(t *testing.T, b Backend) {
		late, early, tie := entry("whd_b", "P1", t0.Add(time.Minute)), entry("whd_z", "P2", t0), entry("whd_a", "P1", t0)
		enqueue(t, b, late, early, tie)
		r := b.Reopen(t)
		schedule(t, r, tie, early, late)
		depth(t, r, 3, 0)
	}},
	{"queue/a reader seeks to the first position at or after the one given", func(t *testing.T, b Backend) {
		e1, e2, e3 := entry("whd_1", "P1", t0), entry("whd_2", "P1", t0.Add(time.Second)), entry("whd_3", "P1", t0.Add(2*time.Second))
		enqueue(t, b, e1, e2, e3)
		got, err := readAll(b, e2.Pos)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameStrings(records(got), recordsOf(e2, e3)); err != nil {
			t.Fatalf("from e2's position: %v", err)
		}
		got, err = readAll(b, append(e2.Pos, 0)) // just past e2
		if err != nil {
			t.Fatal(err)
		}
		if err := sameStrings(records(got), recordsOf(e3)); err != nil {
			t.Fatalf("from just past e2: %v", err)
		}
		if string(got[0].pos) != string(e3.Pos) {
			t.Fatalf("Pos() = %x, want the position e3 was queued at, %x", got[0].pos, e3.Pos)
		}
	}},
	{"queue/a reader seeks backwards too", func(t *testing.T, b Backend) {
		e1, e2 := entry("whd_1", "P1", t0), entry("whd_2", "P1", t0.Add(time.Second))
		enqueue(t, b, e1, e2)
		r, err := b.Webhooks.ReadSchedule()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.Seek(e2.Pos)
		if !r.Valid() || string(r.Pos()) != string(e2.Pos) {
			t.Fatal("Seek(e2) did not land on e2")
		}
		r.Seek(nil)
		if !r.Valid() || string(r.Pos()) != string(e1.Pos) {
			t.Fatal("Seek(nil) after Seek(e2) did not land on e1, the first entry")
		}
	}},
	{"queue/settling removes, re-schedules and kills", func(t *testing.T, b Backend) {
		ok, retry, dead := entry("whd_ok", "P1", t0), entry("whd_retry", "P1", t0), entry("whd_dead", "P1", t0)
		enqueue(t, b, ok, retry, dead)
		later := entry("whd_retry", "P1", t0.Add(time.Hour))
		later.Record = []byte("retry, attempt 2")
		gone := entry("whd_dead", "P1", t0)
		gone.Record = []byte("dead after 185 attempts")
		batch := []webhooks.Settlement{
			{Pos: ok.Pos, Kind: webhooks.SettleDone},
			{Pos: retry.Pos, Kind: webhooks.SettleRetry, Entry: later},
			{Pos: dead.Pos, Kind: webhooks.SettleDead, Entry: gone, Expires: t0.Add(7 * 24 * time.Hour)},
		}
		done := make([]bool, len(batch))
		if err := b.Webhooks.Settle(batch, done); err != nil {
			t.Fatal(err)
		}
		if done[0] != true || done[1] != true || done[2] != true {
			t.Fatalf("done = %v, want every settlement committed", done)
		}
		r := b.Reopen(t)
		schedule(t, r, later)
		depth(t, r, 1, 1)
		rec, err := r.Webhooks.GetDead("whd_dead")
		if err != nil || string(rec) != "dead after 185 attempts" {
			t.Fatalf("GetDead = %q, %v; want the dead record", rec, err)
		}
	}},
	{"queue/undecodable entries are quarantined out of the schedule", func(t *testing.T, b Backend) {
		good, bad := entry("whd_good", "P1", t0), entry("whd_bad", "P1", t0)
		enqueue(t, b, good, bad)
		n, err := b.Webhooks.Quarantine([][]byte{bad.Pos})
		if err != nil || n != 1 {
			t.Fatalf("Quarantine = %d, %v; want 1 moved", n, err)
		}
		schedule(t, b, good)
		depth(t, b, 1, 0)
	}},
	{"queue/a big batch is queued whole", func(t *testing.T, b Backend) {
		const n = 20000 // more than one Badger transaction holds
		es := make([]webhooks.QueueEntry, n)
		for i := range es {
			es[i] = entry(fmt.Sprintf("whd_%06d", i), "P1", t0)
			es[i].Record = make([]byte, 100)
		}
		enqueue(t, b, es...)
		depth(t, b.Reopen(t), n, 0)
	}},
	{"queue/a feed page commits with its deliveries", func(t *testing.T, b Backend) {
		f := b.Feed("orders")
		cursor := "c2"
		with := f.PageWrites(feed.PageWrites{Seen: []string{"ch1"}, SeenUntil: time.Now().Add(time.Hour), Cursor: &cursor})
		if err := b.Webhooks.Enqueue([]webhooks.QueueEntry{entry("whd_1", "P1", t0)}, with); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		got, err := r.Feed("orders").Cursor()
		if err != nil || got != "c2" {
			t.Fatalf("cursor = %q, %v; want c2 stored with the deliveries", got, err)
		}
		seen, err := r.Feed("orders").Seen([]string{"ch1"})
		if err != nil || !seen["ch1"] {
			t.Fatalf("Seen = %v, %v; want ch1 seen", seen, err)
		}
		depth(t, r, 1, 0)
	}},
	{"queue/writes of another backend are refused and nothing is queued", func(t *testing.T, b Backend) {
		if err := b.Webhooks.Enqueue([]webhooks.QueueEntry{entry("whd_1", "P1", t0)}, foreignWrites{}); err == nil {
			t.Fatal("Enqueue with writes of no backend succeeded, want an error")
		}
		depth(t, b, 0, 0)
		schedule(t, b)
	}},
}
