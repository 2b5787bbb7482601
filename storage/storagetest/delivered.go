package storagetest

import (
	"slices"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deliver queues e and settles it delivered at at, keeping its record
// under subscription e.SubscriptionID (at most 100 of them); it returns the
// kept entry.
func deliver(t *testing.T, b Backend, e webhooks.QueueEntry, at time.Time) webhooks.QueueEntry {
	return deliverKeeping(t, b, e, at, 100)
}

// deliverKeeping is deliver with the subscription keeping at most keep.
func deliverKeeping(t *testing.T, b Backend, e webhooks.QueueEntry, at time.Time, keep int) webhooks.QueueEntry {
	t.Helper()
	enqueue(t, b, e)
	kept := e
	kept.Pos = webhooks.SchedulePos(at, e.ID)
	kept.Record = []byte("delivered " + e.ID)
	done := []bool{false}
	if err := b.Webhooks.Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleDone, Entry: kept, Keep: keep}}, done); err != nil || !done[0] {
		t.Fatalf("settling %s delivered: %v", e.ID, err)
	}
	return kept
}

// deliveredRecords lists sub's delivered records in ScanDelivered's order.
func deliveredRecords(t *testing.T, b Backend, sub string) []string {
	t.Helper()
	var out []string
	err := b.Webhooks.ScanDelivered(sub, func(v []byte) (bool, error) {
		out = append(out, string(v))
		return true, nil
	})
	if err != nil {
		t.Fatalf("ScanDelivered(%s): %v", sub, err)
	}
	return out
}

var deliveredBehaviours = []Behaviour{
	{"delivered/a delivered record is kept per subscription, latest first, across a restart", func(t *testing.T, b Backend) {
		a := deliver(t, b, entry("whd_a", "P1", t0), t0.Add(2*time.Minute))
		c := deliver(t, b, entry("whd_c", "P1", t0), t0.Add(time.Minute))
		other := deliver(t, b, entry("whd_o", "P2", t0), t0.Add(3*time.Minute))
		r := b.Reopen(t)
		depth(t, r, 0, 0)
		schedule(t, r)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(a, c)); err != nil {
			t.Fatalf("ScanDelivered(sub_P1), want the latest delivery first: %v", err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P2"), recordsOf(other)); err != nil {
			t.Fatalf("ScanDelivered(sub_P2), want only its own: %v", err)
		}
	}},
	{"delivered/a subscription keeps at most Keep records, the latest, across a restart", func(t *testing.T, b Backend) {
		var kept []webhooks.QueueEntry
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
		for i := range 4 {
			kept = append(kept, deliverKeeping(t, b, entry("whd_"+string(rune('a'+i)), "P1", t0), at(i), 3))
		}
		r := b.Reopen(t)
		kept = append(kept, deliverKeeping(t, r, entry("whd_e", "P1", t0), at(4), 3))
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(kept[4], kept[3], kept[2])); err != nil {
			t.Fatalf("one delivery after a restart, keeping 3: want the latest 3 (the restart must not overwrite a recent one): %v", err)
		}
		for i := 5; i < 7; i++ {
			kept = append(kept, deliverKeeping(t, r, entry("whd_"+string(rune('a'+i)), "P1", t0), at(i), 3))
		}
		other := deliverKeeping(t, r, entry("whd_o", "P2", t0), at(0), 3)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(kept[6], kept[5], kept[4])); err != nil {
			t.Fatalf("after 7 deliveries keeping 3, want the latest 3: %v", err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P2"), recordsOf(other)); err != nil {
			t.Fatalf("another subscription's records: %v", err)
		}
	}},
	{"delivered/a done settlement without a record keeps nothing", func(t *testing.T, b Backend) {
		e := entry("whd_a", "P1", t0)
		enqueue(t, b, e)
		done := []bool{false}
		if err := b.Webhooks.Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleDone}}, done); err != nil || !done[0] {
			t.Fatalf("settling done: %v", err)
		}
		if got := deliveredRecords(t, b, "sub_P1"); len(got) != 0 {
			t.Fatalf("delivered records after a dropped delivery: %q, want none", got)
		}
		if subs, err := b.Webhooks.DeliveredSubscriptions(); err != nil || len(subs) != 0 {
			t.Fatalf("DeliveredSubscriptions = %q, %v; want none", subs, err)
		}
	}},
	{"delivered/scanning stops when fn says so", func(t *testing.T, b Backend) {
		for i, id := range []string{"whd_1", "whd_2", "whd_3"} {
			deliver(t, b, entry(id, "P1", t0), t0.Add(time.Duration(i)*time.Minute))
		}
		n := 0
		err := b.Webhooks.ScanDelivered("sub_P1", func([]byte) (bool, error) { n++; return n < 2, nil })
		if err != nil || n != 2 {
			t.Fatalf("ScanDelivered stopped after %d records (%v), want 2", n, err)
		}
	}},
	{"delivered/trimming keeps the latest and drops those delivered before the cut", func(t *testing.T, b Backend) {
		var kept []webhooks.QueueEntry
		for i := range 5 {
			id := "whd_" + string(rune('a'+i))
			kept = append(kept, deliver(t, b, entry(id, "P1", t0), t0.Add(time.Duration(i)*time.Hour)))
		}
		other := deliver(t, b, entry("whd_o", "P2", t0), t0)
		n, err := b.Webhooks.TrimDelivered("sub_P1", 3, t0)
		if err != nil || n != 2 {
			t.Fatalf("TrimDelivered(keep 3) = %d, %v; want 2 deleted", n, err)
		}
		r := b.Reopen(t)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(kept[4], kept[3], kept[2])); err != nil {
			t.Fatalf("after keeping 3: %v", err)
		}
		n, err = r.Webhooks.TrimDelivered("sub_P1", 3, t0.Add(3*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("TrimDelivered(before 3h) = %d, %v; want the one delivered at 2h deleted", n, err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(kept[4], kept[3])); err != nil {
			t.Fatalf("after the time cut: %v", err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P2"), recordsOf(other)); err != nil {
			t.Fatalf("another subscription's records after trimming sub_P1: %v", err)
		}
	}},
	{"delivered/trimming to zero deletes a subscription's records and its listing", func(t *testing.T, b Backend) {
		deliver(t, b, entry("whd_a", "P1", t0), t0)
		deliver(t, b, entry("whd_b", "P2", t0), t0)
		subs, err := b.Webhooks.DeliveredSubscriptions()
		slices.Sort(subs)
		if err != nil || !slices.Equal(subs, []string{"sub_P1", "sub_P2"}) {
			t.Fatalf("DeliveredSubscriptions = %q, %v; want sub_P1 and sub_P2", subs, err)
		}
		if n, err := b.Webhooks.TrimDelivered("sub_P1", 0, time.Time{}); err != nil || n != 1 {
			t.Fatalf("TrimDelivered(keep 0) = %d, %v; want 1", n, err)
		}
		subs, err = b.Webhooks.DeliveredSubscriptions()
		if err != nil || !slices.Equal(subs, []string{"sub_P2"}) {
			t.Fatalf("DeliveredSubscriptions after trimming sub_P1 away = %q, %v; want sub_P2", subs, err)
		}
	}},
}
