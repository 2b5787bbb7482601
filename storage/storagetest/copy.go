package storagetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// The reads and writes a copy of the whole state needs beyond the
// services' own: dead letters and delivered records loaded as they are,
// every seen marker of a feed, the names of the feeds with state.
var copyBehaviours = []Behaviour{
	{"copy/loaded delivered records read back as they are and are bounded and trimmed like settled ones", func(t *testing.T, b Backend) {
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
		loaded := func(id, p string, i int) webhooks.QueueEntry {
			e := entry(id, p, at(i))
			e.Record = []byte("delivered " + id + " with its attempt log")
			return e
		}
		a, c, other := loaded("whd_a", "P1", 1), loaded("whd_c", "P1", 0), loaded("whd_o", "P2", 5)
		if err := b.Webhooks.LoadDelivered([]webhooks.QueueEntry{a, other, c}); err != nil {
			t.Fatalf("LoadDelivered: %v", err)
		}
		r := b.Reopen(t)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(a, c)); err != nil {
			t.Fatalf("ScanDelivered(sub_P1) after LoadDelivered, want the loaded records, latest position first: %v", err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P2"), recordsOf(other)); err != nil {
			t.Fatalf("ScanDelivered(sub_P2) after LoadDelivered, want only its own: %v", err)
		}
		subs, err := r.Webhooks.DeliveredSubscriptions()
		slices.Sort(subs)
		if err != nil || !slices.Equal(subs, []string{"sub_P1", "sub_P2"}) {
			t.Fatalf("DeliveredSubscriptions = %q, %v; want sub_P1 and sub_P2", subs, err)
		}
		d := deliverKeeping(t, r, entry("whd_d", "P1", t0), at(2), 3)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(d, a, c)); err != nil {
			t.Fatalf("a delivery after the load, keeping 3: want it and both loaded records (the load must not leave a slot to overwrite): %v", err)
		}
		e := deliverKeeping(t, r, entry("whd_e", "P1", t0), at(3), 3)
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(e, d, a)); err != nil {
			t.Fatalf("another delivery, keeping 3: want the latest 3 (the oldest loaded one dropped): %v", err)
		}
		if n, err := r.Webhooks.TrimDelivered("sub_P1", 3, at(2)); err != nil || n != 1 {
			t.Fatalf("TrimDelivered(before the 2nd minute) = %d, %v; want the loaded record delivered before it deleted", n, err)
		}
		if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(e, d)); err != nil {
			t.Fatalf("after the time cut: %v", err)
		}
		if n, err := r.Webhooks.TrimDelivered("sub_P2", 0, time.Time{}); err != nil || n != 1 {
			t.Fatalf("TrimDelivered(sub_P2, keep 0) = %d, %v; want the loaded record deleted", n, err)
		}
	}},
	{"copy/a loaded log longer than Keep: each delivery after it leaves the latest Keep records, none missing between them", func(t *testing.T, b Backend) {
		var history []webhooks.QueueEntry // oldest first
		for i := range 5 {
			e := entry(fmt.Sprint("whd_loaded_", i), "P1", t0.Add(time.Duration(i)*time.Minute))
			e.Record = []byte("delivered " + e.ID)
			history = append(history, e)
		}
		if err := b.Webhooks.LoadDelivered(history); err != nil {
			t.Fatalf("LoadDelivered: %v", err)
		}
		r := b.Reopen(t)
		for i := range 4 {
			history = append(history, deliverKeeping(t, r, entry(fmt.Sprint("whd_new_", i), "P1", t0), t0.Add(time.Hour+time.Duration(i)*time.Minute), 3))
			latest := slices.Clone(history[len(history)-3:])
			slices.Reverse(latest)
			if err := sameStrings(deliveredRecords(t, r, "sub_P1"), recordsOf(latest...)); err != nil {
				t.Fatalf("delivery %d after loading 5 records, keeping 3: want the latest 3, latest first: %v", i+1, err)
			}
		}
	}},
	{"copy/loaded dead letters are listed and found like settled ones", func(t *testing.T, b Backend) {
		a, c := entry("whd_a", "P1", t0), entry("whd_c", "P2", t0)
		err := b.Webhooks.LoadDead([]webhooks.DeadLetter{
			{ID: a.ID, PartnerID: a.PartnerID, SubscriptionID: a.SubscriptionID, Expires: t0.Add(2 * time.Hour), Record: a.Record},
			{ID: c.ID, PartnerID: c.PartnerID, SubscriptionID: c.SubscriptionID, Expires: t0.Add(time.Hour), Record: c.Record},
		})
		if err != nil {
			t.Fatalf("LoadDead: %v", err)
		}
		r := b.Reopen(t)
		got, err := deadRecords(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameStrings(got, recordsOf(c, a)); err != nil {
			t.Fatalf("ScanDead after LoadDead (want soonest expiry first): %v", err)
		}
		if v, err := r.Webhooks.GetDead("whd_a"); err != nil || string(v) != string(a.Record) {
			t.Fatalf("GetDead of a loaded dead letter = %q, %v; want its record", v, err)
		}
		if _, dead, err := r.Webhooks.Depth(); err != nil || dead != 2 {
			t.Fatalf("Depth counts %d dead letters (%v), want the 2 loaded", dead, err)
		}
		if n, err := r.Webhooks.PurgeDead(t0.Add(90*time.Minute), 10); err != nil || n != 1 {
			t.Fatalf("PurgeDead at its expiry purged %d (%v), want the loaded letter that expired", n, err)
		}
	}},
	{"copy/ScanSeen lists a feed's unexpired markers in id order, with their expiry", func(t *testing.T, b Backend) {
		until := time.Now().Add(time.Hour).Truncate(time.Second)
		commit(t, b.Feed("orders"), feed.PageWrites{Seen: []string{"c2", "c1"}, SeenUntil: until})
		commit(t, b.Feed("orders"), feed.PageWrites{Seen: []string{"old"}, SeenUntil: time.Now().Add(-time.Hour)})
		commit(t, b.Feed("returns"), feed.PageWrites{Seen: []string{"r1"}, SeenUntil: until})
		var ids []string
		err := b.Reopen(t).Feed("orders").ScanSeen(func(id string, u time.Time) error {
			ids = append(ids, id)
			if !u.Equal(until) {
				t.Errorf("marker %s expires at %v, want %v", id, u, until)
			}
			return nil
		})
		if err != nil || !slices.Equal(ids, []string{"c1", "c2"}) {
			t.Fatalf("ScanSeen = %q, %v; want c1 and c2 (old expired; r1 is another feed's)", ids, err)
		}
	}},
	{"copy/FeedNames lists the feeds with a cursor, seen markers or rejected changes, sorted", func(t *testing.T, b Backend) {
		if names, err := b.FeedNames(); err != nil || len(names) != 0 {
			t.Fatalf("FeedNames of an empty store = %q, %v; want none", names, err)
		}
		c := "7"
		commit(t, b.Feed("wms"), feed.PageWrites{Cursor: &c})
		commit(t, b.Feed("returns"), feed.PageWrites{Seen: []string{"a"}, SeenUntil: time.Now().Add(time.Hour)})
		commit(t, b.Feed("orders"), feed.PageWrites{Rejected: []feed.Rejected{{Seq: 1, Reason: "no partner", Source: "poll", RejectedAt: t0}}, RejectedTotal: 1})
		names, err := b.Reopen(t).FeedNames()
		if err != nil || !slices.Equal(names, []string{"orders", "returns", "wms"}) {
			t.Fatalf("FeedNames = %q, %v; want orders, returns, wms", names, err)
		}
	}},
}
