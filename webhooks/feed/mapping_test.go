package feed

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func ev(name, id string) webhooks.Event { return webhooks.Event{Name: name, Identifier: id} }

func mustMapping(t *testing.T, cfg *MappingConfig) *Mapping {
	t.Helper()
	m, err := NewMapping(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every change kind of the feed contract, for both partner kinds.
func TestMapEveryChangeBothPartnerKinds(t *testing.T) {
	m := mustMapping(t, nil)
	base := Change{ID: "c1", Partner: "acme"}
	tests := []struct {
		name          string
		kind, change  string
		entity, ship  string
		products      []string
		consolidation []webhooks.Event
		plain         []webhooks.Event // non-consolidation
	}{
		{"outbound created (first status)", "outbound", "created", "o1", "", nil,
			[]webhooks.Event{ev("outbound-status", "o1")}, []webhooks.Event{ev("outbound-status", "o1")}},
		{"outbound status changed", "outbound", "status-changed", "o1", "", nil,
			[]webhooks.Event{ev("outbound-status", "o1")}, []webhooks.Event{ev("outbound-status", "o1")}},
		{"shipment created", "shipment", "created", "s1", "", nil,
			[]webhooks.Event{ev("shipment-created", "s1")}, nil},
		{"shipment dispatched", "shipment", "dispatched", "s1", "", nil,
			[]webhooks.Event{ev("shipment-shipped", "s1")}, nil},
		{"label printed", "label", "printed", "l1", "s1", nil,
			nil, []webhooks.Event{ev("shipment-shipped", "s1")}},
		{"label status changed", "label", "status-changed", "l1", "s1", nil,
			[]webhooks.Event{ev("label-status", "l1")}, []webhooks.Event{ev("label-status", "l1")}},
		{"receipt received", "receipt", "received", "r1", "", nil,
			[]webhooks.Event{ev("receipt-received", "r1")}, []webhooks.Event{ev("receipt-received", "r1")}},
		{"inbound created (first status)", "inbound", "created", "i1", "", nil,
			[]webhooks.Event{ev("inbound-status", "i1")}, []webhooks.Event{ev("inbound-status", "i1")}},
		{"inbound status changed", "inbound", "status-changed", "i1", "", nil,
			[]webhooks.Event{ev("inbound-status", "i1")}, []webhooks.Event{ev("inbound-status", "i1")}},
		{"adjustment over three products", "adjustment", "posted", "a1", "", []string{"p1", "p2", "p3"},
			[]webhooks.Event{ev("adjustment-posted", "a1:p1"), ev("adjustment-posted", "a1:p2"), ev("adjustment-posted", "a1:p3")},
			[]webhooks.Event{ev("adjustment-posted", "a1:p1"), ev("adjustment-posted", "a1:p2"), ev("adjustment-posted", "a1:p3")}},
		{"adjustment repeating a product fires once for it", "adjustment", "posted", "a2", "", []string{"p1", "p1", "p2"},
			[]webhooks.Event{ev("adjustment-posted", "a2:p1"), ev("adjustment-posted", "a2:p2")},
			[]webhooks.Event{ev("adjustment-posted", "a2:p1"), ev("adjustment-posted", "a2:p2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			c.Kind, c.Change, c.Entity, c.Shipment, c.Products = tt.kind, tt.change, tt.entity, tt.ship, tt.products
			for _, consolidation := range []bool{true, false} {
				want := tt.plain
				if consolidation {
					want = tt.consolidation
				}
				got, reason := m.Map(c, consolidation)
				if reason != "" {
					t.Fatalf("consolidation=%v: rejected: %s", consolidation, reason)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("consolidation=%v: got %v, want %v", consolidation, got, want)
				}
				for _, e := range got {
					if !webhooks.ValidEvent(e.Name) {
						t.Errorf("invalid event name %q", e.Name)
					}
				}
			}
		})
	}
}

func TestMapRejects(t *testing.T) {
	m := mustMapping(t, nil)
	ok := Change{ID: "c1", Partner: "acme", Kind: "outbound", Entity: "o1", Change: "status-changed"}
	tests := []struct {
		name   string
		edit   func(c *Change)
		reason string
	}{
		{"missing id", func(c *Change) { c.ID = "" }, "missing change id"},
		{"id too long", func(c *Change) { c.ID = strings.Repeat("x", maxIDLen+1) }, "longer than"},
		{"missing partner", func(c *Change) { c.Partner = "" }, "missing partner"},
		{"missing kind", func(c *Change) { c.Kind = "" }, "missing kind"},
		{"unknown kind", func(c *Change) { c.Kind = "pallet" }, `unknown kind "pallet"`},
		{"missing entity", func(c *Change) { c.Entity = "" }, "missing entity"},
		{"unknown change", func(c *Change) { c.Change = "exploded" }, `unknown change "exploded"`},
		{"invalid decode", func(c *Change) { c.Invalid = `field "id": want a string` }, "want a string"},
		{"label printed without shipment", func(c *Change) { c.Kind, c.Change = "label", "printed" }, "without its shipment"},
		{"adjustment without products", func(c *Change) { c.Kind, c.Change = "adjustment", "posted" }, "without products"},
		{"adjustment with empty product", func(c *Change) {
			c.Kind, c.Change, c.Products = "adjustment", "posted", []string{"p1", ""}
		}, "empty product"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			for _, consolidation := range []bool{true, false} {
				got, reason := m.Map(c, consolidation)
				if !strings.Contains(reason, tt.reason) || got != nil {
					t.Errorf("consolidation=%v: got %v, reason %q; want reason containing %q", consolidation, got, reason, tt.reason)
				}
			}
		})
	}
}

// A WMS whose feed names fields, kinds and changes otherwise.
func TestMapConfiguredNames(t *testing.T) {
	no := false
	m := mustMapping(t, &MappingConfig{
		Fields:          map[string]string{"id": "seq", "partner": "owner", "entity": "ref", "products": "skus", "change": "event"},
		Kinds:           map[string]string{"outbound": "order", "adjustment": "stockcount"},
		Changes:         map[string]string{"outbound.status-changed": "STATE", "adjustment.posted": "booked"},
		CreatedIsStatus: &no,
	})
	page, err := DecodePage([]byte(`{"changes":[
		{"seq":"1","owner":"acme","kind":"order","ref":"o9","event":"STATE"},
		{"seq":"2","owner":"acme","kind":"stockcount","ref":"a9","event":"booked","skus":["x","y"]},
		{"seq":"3","owner":"acme","kind":"order","ref":"o9","event":"created"},
		{"seq":"4","owner":"acme","kind":"outbound","ref":"o9","event":"STATE"},
		{"seq":"5","owner":"acme","kind":"order","ref":"o9","event":"status-changed"}
	],"next":"5"}`), m)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		events []webhooks.Event
		reason string
	}{
		{[]webhooks.Event{ev("outbound-status", "o9")}, ""},
		{[]webhooks.Event{ev("adjustment-posted", "a9:x"), ev("adjustment-posted", "a9:y")}, ""},
		{nil, ""}, // created_is_status off: read, no event
		{nil, `unknown kind "outbound"`},
		{nil, `unknown change "status-changed"`},
	}
	for i, c := range page.Changes {
		got, reason := m.Map(c, false)
		if !reflect.DeepEqual(got, want[i].events) || !strings.Contains(reason, want[i].reason) || (want[i].reason == "" && reason != "") {
			t.Errorf("change %d: got %v %q, want %v %q", i, got, reason, want[i].events, want[i].reason)
		}
	}
}

func TestNewMappingRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]*MappingConfig{
		"unknown field":  {Fields: map[string]string{"colour": "x"}},
		"unknown kind":   {Kinds: map[string]string{"pallet": "x"}},
		"unknown change": {Changes: map[string]string{"outbound.exploded": "x"}},
		"field twice":    {Fields: map[string]string{"id": "partner"}},
		"kind twice":     {Kinds: map[string]string{"outbound": "shipment"}},
		"change twice":   {Changes: map[string]string{"outbound.created": "status-changed"}},
	} {
		if _, err := NewMapping(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
