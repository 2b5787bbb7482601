package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// kill queues e and settles it dead, expiring at exp.
func kill(t *testing.T, b Backend, e webhooks.QueueEntry, exp time.Time) {
	t.Helper()
	enqueue(t, b, e)
	done := []bool{false}
	if err := b.Webhooks.Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleDead, Entry: e, Expires: exp}}, done); err != nil || !done[0] {
		t.Fatalf("settling %s dead: %v", e.ID, err)
	}
}

var deadLetterBehaviours = []Behaviour{
	{"dead/dead letters are listed soonest expiry first", func(t *testing.T, b Backend) {
		a, c := entry("whd_a", "P1", t0), entry("whd_c", "P1", t0)
		kill(t, b, a, t0.Add(2*time.Hour))
		kill(t, b, c, t0.Add(time.Hour))
		got, err := deadRecords(b.Reopen(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := sameStrings(got, recordsOf(c, a)); err != nil {
			t.Fatalf("ScanDead: %v", err)
		}
	}},
	{"dead/a missing dead letter is ErrNotFound", func(t *testing.T, b Backend) {
		if _, err := b.Webhooks.GetDead("whd_none"); !errors.Is(err, webhooks.ErrNotFound) {
			t.Fatalf("GetDead of a missing id: %v, want ErrNotFound", err)
		}
	}},
	{"dead/a revived dead letter is queued again, once", func(t *testing.T, b Backend) {
		e := entry("whd_a", "P1", t0)
		exp := t0.Add(time.Hour)
		kill(t, b, e, exp)
		again := entry("whd_a", "P1", t0.Add(time.Minute))
		n, err := b.Webhooks.Revive([]webhooks.Revival{{ID: "whd_a", Expires: exp, Entry: again}})
		if err != nil || n != 1 {
			t.Fatalf("Revive = %d, %v; want 1", n, err)
		}
		n, err = b.Webhooks.Revive([]webhooks.Revival{{ID: "whd_a", Expires: exp, Entry: again}})
		if err != nil || n != 0 {
			t.Fatalf("second Revive = %d, %v; want 0 (no longer dead)", n, err)
		}
		r := b.Reopen(t)
		schedule(t, r, again)
		depth(t, r, 1, 0)
		if got, _ := deadRecords(r); len(got) != 0 {
			t.Fatalf("dead letters after revival: %q, want none", got)
		}
	}},
	{"dead/purging deletes expired dead letters only, up to the limit", func(t *testing.T, b Backend) {
		for i, id := range []string{"whd_1", "whd_2", "whd_3"} {
			kill(t, b, entry(id, "P1", t0), t0.Add(time.Duration(i)*time.Hour))
		}
		n, err := b.Webhooks.PurgeDead(t0.Add(90*time.Minute), 1)
		if err != nil || n != 1 {
			t.Fatalf("PurgeDead(limit 1) = %d, %v; want 1", n, err)
		}
		n, err = b.Webhooks.PurgeDead(t0.Add(90*time.Minute), 100)
		if err != nil || n != 1 {
			t.Fatalf("PurgeDead = %d, %v; want the one other expired letter", n, err)
		}
		r := b.Reopen(t)
		got, _ := deadRecords(r)
		if err := sameStrings(got, recordsOf(entry("whd_3", "P1", t0))); err != nil {
			t.Fatalf("dead letters left: %v", err)
		}
		depth(t, r, 0, 1)
	}},
}
