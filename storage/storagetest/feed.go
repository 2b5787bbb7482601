package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func commit(t *testing.T, f feed.Store, w feed.PageWrites) {
	t.Helper()
	if err := f.Commit(f.PageWrites(w)); err != nil {
		t.Fatal(err)
	}
}

var feedBehaviours = []Behaviour{
	{"feed/the cursor is empty, then what was committed, per feed", func(t *testing.T, b Backend) {
		if c, err := b.Feed("orders").Cursor(); err != nil || c != "" {
			t.Fatalf("new feed's cursor = %q, %v; want empty", c, err)
		}
		c := "42"
		commit(t, b.Feed("orders"), feed.PageWrites{Cursor: &c})
		r := b.Reopen(t)
		if got, err := r.Feed("orders").Cursor(); err != nil || got != "42" {
			t.Fatalf("cursor after a restart = %q, %v; want 42", got, err)
		}
		if got, _ := r.Feed("returns").Cursor(); got != "" {
			t.Fatalf("another feed's cursor = %q, want empty", got)
		}
	}},
	{"feed/seen markers hold until they expire, per feed", func(t *testing.T, b Backend) {
		f := b.Feed("orders")
		commit(t, f, feed.PageWrites{Seen: []string{"a", "b"}, SeenUntil: time.Now().Add(time.Hour)})
		commit(t, f, feed.PageWrites{Seen: []string{"old"}, SeenUntil: time.Now().Add(-time.Hour)})
		seen, err := b.Reopen(t).Feed("orders").Seen([]string{"a", "b", "c", "old"})
		if err != nil || !seen["a"] || !seen["b"] || seen["c"] || seen["old"] {
			t.Fatalf("Seen = %v, %v; want a and b only (old expired, c never seen)", seen, err)
		}
		if other, _ := b.Feed("returns").Seen([]string{"a"}); other["a"] {
			t.Fatal("a seen in another feed")
		}
	}},
	{"feed/ForgetSeen forgets this feed's markers only", func(t *testing.T, b Backend) {
		commit(t, b.Feed("orders"), feed.PageWrites{Seen: []string{"a"}, SeenUntil: time.Now().Add(time.Hour)})
		commit(t, b.Feed("returns"), feed.PageWrites{Seen: []string{"a"}, SeenUntil: time.Now().Add(time.Hour)})
		if err := b.Feed("orders").ForgetSeen(); err != nil {
			t.Fatal(err)
		}
		if seen, _ := b.Feed("orders").Seen([]string{"a"}); seen["a"] {
			t.Fatal("a still seen after ForgetSeen")
		}
		if seen, _ := b.Feed("returns").Seen([]string{"a"}); !seen["a"] {
			t.Fatal("another feed's marker was forgotten too")
		}
	}},
	{"feed/the last MaxRejected rejected changes are kept with the total", func(t *testing.T, b Backend) {
		f := b.Feed("orders")
		var total uint64
		for range 3 {
			var rs []feed.Rejected
			for range 60 {
				total++
				rs = append(rs, feed.Rejected{Seq: total, ChangeID: fmt.Sprint("ch", total), Reason: "unknown partner",
					Source: "poll", RejectedAt: t0})
			}
			commit(t, f, feed.PageWrites{Rejected: rs, RejectedTotal: total})
		}
		got, tot, err := b.Reopen(t).Feed("orders").Rejected()
		if err != nil || tot != 180 || len(got) != feed.MaxRejected {
			t.Fatalf("Rejected() = %d kept, total %d, %v; want %d kept of 180", len(got), tot, err, feed.MaxRejected)
		}
		if got[0].Seq != 81 || got[len(got)-1].Seq != 180 || got[0].ChangeID != "ch81" {
			t.Fatalf("kept %d..%d (first %q), want 81..180 oldest first", got[0].Seq, got[len(got)-1].Seq, got[0].ChangeID)
		}
	}},
	{"feed/writes of another backend are refused", func(t *testing.T, b Backend) {
		if err := b.Feed("orders").Commit(foreignWrites{}); err == nil {
			t.Fatal("Commit of writes of no backend succeeded, want an error")
		}
	}},
}
