package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"
)

// The protected side is what partners get: adapted to JSON, its routes
// (matchers, handlers and every handler option, the proxy's upstream
// included) are those of the demo Caddyfile's gateway site.
func TestGatewaySiteIsTheDemos(t *testing.T) {
	t.Setenv("WMS_PORT", "9")
	t.Setenv("FULFILGATE_PORT", "3")
	demo, err := os.ReadFile("../../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	want := siteRoutes(t, string(demo), "127.0.0.1:3")
	got := siteRoutes(t, gatewayCaddyfile(ports{admin: 1, protected: 3, bare: 4, wms: 9}, t.TempDir(), true), "127.0.0.1:3")
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("the benchmark's protected site differs from the demo's gateway site:\n%s\nthe demo's:\n%s", g, w)
	}
}

// The bare side is the protected side's reverse_proxy, with the same
// options, and nothing else.
func TestBareSiteIsTheSameProxyAlone(t *testing.T) {
	cf := gatewayCaddyfile(ports{admin: 1, protected: 3, bare: 4, wms: 9}, t.TempDir(), false)
	prot := siteRoutes(t, cf, "127.0.0.1:3")
	bare := siteRoutes(t, cf, "127.0.0.1:4")
	last := func(routes []any) any {
		r := routes[len(routes)-1].(map[string]any)
		h := r["handle"].([]any)
		return h[len(h)-1]
	}
	if len(bare) != 1 || len(bare[0].(map[string]any)["handle"].([]any)) != 1 {
		t.Fatalf("the bare site has more than one handler: %v", bare)
	}
	if !reflect.DeepEqual(last(bare), last(prot)) {
		t.Fatalf("the bare site's proxy %v differs from the protected site's %v", last(bare), last(prot))
	}
	if strings.Contains(cf, "wms_simulator") {
		t.Fatal("the simulator is in the gateway's configuration although it runs in its own process")
	}
}

// siteRoutes adapts a Caddyfile and returns the routes of the server
// listening on listen, as generic JSON.
func siteRoutes(t *testing.T, caddyfile, listen string) []any {
	t.Helper()
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen []string `json:"listen"`
					Routes []any    `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Apps.HTTP.Servers {
		for _, l := range s.Listen {
			if l == listen {
				return s.Routes
			}
		}
	}
	t.Fatalf("no server listens on %s in:\n%s", listen, cfg)
	return nil
}

// The gateway accepts the benchmark's configuration: a benchmark whose
// gateway refuses to start (say, a client secret the gateway finds too
// weak) measures nothing.
func TestGatewayCaddyfileIsValid(t *testing.T) {
	t.Setenv("WMS_PORT", "9")
	cf := gatewayCaddyfile(ports{admin: 1, protected: 3, bare: 4, wms: 9}, t.TempDir(), true)
	raw, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg caddy.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		t.Fatalf("the gateway refuses the benchmark's configuration: %v", err)
	}
}
