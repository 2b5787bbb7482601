package wmssim

import (
	"testing"
	"time"
)

func TestStoreIDsAndSeed(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := newStore(clock.Now, true)
	if len(s.items.order) != len(demoItems) || len(s.changes) != 0 {
		t.Fatalf("seeded %d items, %d changes", len(s.items.order), len(s.changes))
	}
	it, ok := s.items.get("ITM-000001")
	if !ok || it.Partner != "partner-acme" || it.CreatedAt != "2025-01-02T03:04:05Z" {
		t.Fatalf("first item %+v", it)
	}
	partners := map[string]int{}
	for _, it := range s.items.order {
		partners[it.Partner]++
	}
	if partners["partner-acme"] == 0 || partners["partner-globex"] == 0 {
		t.Fatalf("seed partners %v", partners)
	}
	// Each table counts on its own; ids are zero-padded counters.
	ob, _ := s.createOutbound("p", "")
	ib, _ := s.createInbound("p", "")
	if ob.ID != "OB-000001" || ib.ID != "IB-000001" || ob.OrderRef != "SO-OB-000001" {
		t.Fatalf("ids %s %s ref %s", ob.ID, ib.ID, ob.OrderRef)
	}
	if _, ok := s.outbounds.get("OB-000002"); ok {
		t.Fatal("found an id never issued")
	}
	if empty := newStore(nil, false); len(empty.items.order) != 0 || empty.now == nil {
		t.Fatal("unseeded store has items or no clock")
	}
}

// A change carries the same time as the record change that caused it.
func TestStoreChangeTimeMatchesRecord(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := newStore(clock.Now, false)
	ob, c1 := s.createOutbound("p", "")
	clock.Advance(time.Minute)
	ob2, c2, err := s.setOutboundStatus(ob.ID, "packed")
	if err != nil {
		t.Fatal(err)
	}
	if c1.At != ob.CreatedAt || c2.At != ob2.UpdatedAt || c1.At == c2.At {
		t.Fatalf("times: %s/%s and %s/%s", c1.At, ob.CreatedAt, c2.At, ob2.UpdatedAt)
	}
	if _, _, err := s.setOutboundStatus("OB-000404", "x"); err == nil || err.status != 404 {
		t.Fatalf("unknown id: %+v", err)
	}
}
