package wmssim

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// The directive adapts to the handler, ordered before reverse_proxy.
func TestCaddyfileAdapts(t *testing.T) {
	input := `:8081 {
	reverse_proxy 127.0.0.1:9
	wms_simulator {
		name demo
		seed off
	}
}
`
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	out, warnings, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	s := string(out)
	sim := strings.Index(s, `{"handler":"wms_simulator","name":"demo","seed":false}`)
	rp := strings.Index(s, `"handler":"reverse_proxy"`)
	if sim < 0 || rp < 0 || sim > rp {
		t.Fatalf("adapted JSON lacks the simulator before reverse_proxy:\n%s", s)
	}
}

// Two configs with the same name (a reload: the new one provisions before
// the old one cleans up) share one warehouse; when the last one goes, the
// warehouse goes.
func TestModuleStoreSurvivesReload(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	name := "reload-" + t.Name()
	provision := func(raw string) *Handler {
		var h Handler
		if err := json.Unmarshal([]byte(raw), &h); err != nil {
			t.Fatal(err)
		}
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		return &h
	}
	old := provision(`{"name":"` + name + `"}`)
	old.store.mu.Lock()
	old.store.createOutbound("partner-acme", "")
	old.store.mu.Unlock()

	next := provision(`{"name":"` + name + `","seed":false}`)
	if next.store != old.store {
		t.Fatal("a reload with the same name got another warehouse")
	}
	if err := old.Cleanup(); err != nil {
		t.Fatal(err)
	}
	next.store.mu.Lock()
	n, items := len(next.store.changes), len(next.store.items.order)
	next.store.mu.Unlock()
	if n != 1 || items != len(demoItems) {
		t.Fatalf("after reload: %d changes, %d items", n, items)
	}
	other := provision(`{"name":"other-` + name + `","seed":false}`)
	if other.store == next.store || len(other.store.items.order) != 0 {
		t.Fatal("another name shares the warehouse or was seeded")
	}
	_ = other.Cleanup()
	if err := next.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if err := next.Cleanup(); err != nil { // a second cleanup is harmless
		t.Fatal(err)
	}
	fresh := provision(`{"name":"` + name + `","seed":false}`)
	defer fresh.Cleanup()
	if len(fresh.store.changes) != 0 {
		t.Fatal("the warehouse outlived every config using it")
	}
}

func TestModuleDefaultsAndValidate(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	var h Handler
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Cleanup()
	if h.Name != "default" {
		t.Fatalf("default name %q", h.Name)
	}
	bad := Handler{Name: strings.Repeat("x", 129)}
	if err := bad.Validate(); err == nil {
		t.Fatal("a 129-byte name validated")
	}
	if info := (Handler{}).CaddyModule(); info.ID != "http.handlers.wms_simulator" {
		t.Fatalf("module id %s", info.ID)
	}
}

func TestWMSPath(t *testing.T) {
	cases := []struct {
		in   string
		segs []string
		ok   bool
	}{
		{"/wms", nil, true},
		{"/wms/", nil, true},
		{"/wms/items", []string{"items"}, true},
		{"/wms//items/", []string{"items"}, true},
		{"/wms/classic/items/ITM-1", []string{"classic", "items", "ITM-1"}, true},
		{"/wmsx", nil, false},
		{"/", nil, false},
		{"", nil, false},
		{"/api/wms/items", nil, false},
	}
	for _, c := range cases {
		segs, ok := wmsPath(c.in)
		if ok != c.ok || !reflect.DeepEqual(segs, c.segs) {
			t.Errorf("wmsPath(%q) = %q, %v; want %q, %v", c.in, segs, ok, c.segs, c.ok)
		}
	}
}

// A reload cleans the old config's handler up while its last requests may
// still be in flight: they are answered from the same warehouse, not
// with a panic that leaves the warehouse's lock held.
func TestRequestAfterCleanupIsStillAnswered(t *testing.T) {
	s := newSim(t, true)
	if err := s.h.Cleanup(); err != nil {
		t.Fatal(err)
	}
	status, _, body := s.do("GET", "/wms/items", "", "X-Partner-Id", "partner-acme")
	if status != 200 {
		t.Fatalf("GET /wms/items after Cleanup answered %d %s, want 200 from the same warehouse", status, body)
	}
	status, _, _ = s.do("GET", "/wms/items", "", "X-Partner-Id", "partner-acme")
	if status != 200 {
		t.Fatalf("a second request after Cleanup answered %d, want 200 (the warehouse's lock must not be left held)", status)
	}
}
