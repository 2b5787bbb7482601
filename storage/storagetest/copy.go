package storagetest

import (
	"slices"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// The reads and writes a copy of the whole state needs beyond the
// services' own: dead letters loaded as they are, every seen marker of a
// feed, the names of the feeds with state.
var copyBehaviours = []Behaviour{
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
