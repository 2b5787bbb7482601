package webhooks

import (
	"testing"
)

// An event published again under the same key reaches each subscription
// with the x-hook-id it had the first time; another key, another
// subscription or no key gives another id.
func TestPublishKeyedGivesStableDeliveryIDs(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcvA, rcvB := newReceiver(t, always(200)), newReceiver(t, always(200))
	subscribe(t, s, "p1", rcvA.URL, EventLabelStatus)
	subscribe(t, s, "p1", rcvB.URL, EventLabelStatus)
	ev := []Event{{Name: EventLabelStatus, Identifier: "L1"}}
	send := func(keys []string) map[string]string { // receiver → x-hook-id
		t.Helper()
		beforeA, beforeB := len(rcvA.Hits()), len(rcvB.Hits())
		var err error
		if keys == nil {
			_, err = s.Publish("p1", ev, nil)
		} else {
			_, err = s.PublishKeyed("p1", ev, keys, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		runDue(t, s)
		out := map[string]string{}
		for _, h := range rcvA.Hits()[beforeA:] {
			out["/a"] = h.Header.Get("x-hook-id")
		}
		for _, h := range rcvB.Hits()[beforeB:] {
			out["/b"] = h.Header.Get("x-hook-id")
		}
		if len(out) != 2 {
			t.Fatalf("deliveries reached %v, want both subscriptions", out)
		}
		return out
	}
	first := send([]string{"feed wms, change 7"})
	again := send([]string{"feed wms, change 7"})
	if first["/a"] != again["/a"] || first["/b"] != again["/b"] {
		t.Fatalf("the same event published again under the same key: ids %v then %v, want the same per subscription", first, again)
	}
	if first["/a"] == first["/b"] {
		t.Fatalf("two subscriptions got the same id %s, want one each", first["/a"])
	}
	other := send([]string{"feed wms, change 8"})
	unkeyed1, unkeyed2 := send(nil), send(nil)
	if other["/a"] == first["/a"] || unkeyed1["/a"] == unkeyed2["/a"] || unkeyed1["/a"] == first["/a"] {
		t.Fatalf("ids: key 7 %v, key 8 %v, no key %v and %v; want a new id for another key and for every unkeyed event",
			first, other, unkeyed1, unkeyed2)
	}
	if _, err := s.PublishKeyed("p1", ev, nil, nil); err == nil {
		t.Fatal("PublishKeyed with no key for its event succeeded, want an error")
	}
}
