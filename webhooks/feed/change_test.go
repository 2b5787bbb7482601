package feed

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodePageSimulatorFormat(t *testing.T) {
	m := mustMapping(t, nil)
	p, err := DecodePage([]byte(`{"changes":[{"id":"7","partner":"acme","kind":"adjustment","entity":"a1",
		"change":"posted","status":"","shipment":"","products":["p1","p2"],"at":"2025-01-02T03:04:05.5Z","extra":{"x":1}}],
		"next":"7"}`), m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Next != "7" || len(p.Changes) != 1 {
		t.Fatalf("page %+v", p)
	}
	c := p.Changes[0]
	if c.ID != "7" || c.Partner != "acme" || c.Kind != "adjustment" || c.Entity != "a1" || c.Change != "posted" ||
		len(c.Products) != 2 || c.Invalid != "" || !c.At.Equal(time.Date(2025, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
		t.Fatalf("change %+v", c)
	}
}

func TestDecodePageHostile(t *testing.T) {
	m := mustMapping(t, nil)
	malformed := map[string]string{
		"garbage":             `{"changes":[{"id":`,
		"not an object":       `[1,2,3]`,
		"null":                `null`,
		"changes not array":   `{"changes":{"id":"1"},"next":"1"}`,
		"next wrong type":     `{"changes":[],"next":{"a":1}}`,
		"changes but no next": `{"changes":[{"id":"1"}]}`,
		"html error page":     `<html>502 Bad Gateway</html>`,
	}
	for name, body := range malformed {
		if _, err := DecodePage([]byte(body), m); !errors.Is(err, ErrMalformedPage) {
			t.Errorf("%s: err = %v, want ErrMalformedPage", name, err)
		}
	}
	// Wrong types inside a change reject that change only.
	p, err := DecodePage([]byte(`{"changes":[42,"x",{"id":5},{"id":"ok","products":"p1"},{"id":"fine","partner":"a"}],"next":9}`), m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Next != "9" {
		t.Errorf("numeric next = %q", p.Next)
	}
	wantInvalid := []string{"not a JSON object", "not a JSON object", `field "id"`, `field "products"`, ""}
	for i, c := range p.Changes {
		if (wantInvalid[i] == "") != (c.Invalid == "") || !strings.Contains(c.Invalid, wantInvalid[i]) {
			t.Errorf("change %d: Invalid = %q, want %q", i, c.Invalid, wantInvalid[i])
		}
	}
	// An empty page keeps no next.
	p, err = DecodePage([]byte(`{"changes":[],"next":""}`), m)
	if err != nil || p.HasNext || len(p.Changes) != 0 {
		t.Errorf("empty page: %+v %v", p, err)
	}
}
