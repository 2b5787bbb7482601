package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"

	"github.com/fulfilgate/fulfilgate/bench/internal/cfgcheck"
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

// The gateway accepts the benchmark's configuration in every mode (the
// throughput, callgrind and profile modes share the default one;
// -decompose adds its sites, -wms same the simulator) and the simulator's
// process accepts its own: a benchmark whose gateway refuses to start (say,
// a client secret the gateway finds too weak, or a site the route check
// refuses) measures nothing.
func TestEveryModesCaddyfileIsValid(t *testing.T) {
	free := make([]int, 4+len(decomposition))
	for i := range free {
		free[i] = 10 + i
	}
	for _, mode := range []struct {
		name                   string
		sameProcess, decompose bool
	}{
		{"throughput, callgrind, profile", false, false},
		{"callgrind -decompose", false, true},
		{"-wms same", true, false},
		{"-wms same -decompose", true, true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			cf := gatewayCaddyfile(portsOf(free, mode.decompose), t.TempDir(), mode.sameProcess)
			if err := cfgcheck.Validate(cf); err != nil {
				t.Fatalf("the gateway refuses the benchmark's configuration for %s: %v\n%s", mode.name, err, cf)
			}
		})
	}
	t.Run("the simulator's process", func(t *testing.T) {
		cf := wmsCaddyfile(portsOf(free, false))
		if err := cfgcheck.Validate(cf); err != nil {
			t.Fatalf("the simulator refuses its configuration: %v\n%s", err, cf)
		}
	})
}

// -decompose splits the protected site into its layers: from bare to
// protected, each site has the handlers of the one before it and exactly
// one more, in the protected site's order.
func TestDecompositionAddsOneLayerPerSite(t *testing.T) {
	free := make([]int, 4+len(decomposition))
	for i := range free {
		free[i] = 10 + i
	}
	p := portsOf(free, true)
	cf := gatewayCaddyfile(p, t.TempDir(), false)
	chain := []struct {
		name string
		port int
	}{{"bare", p.bare}}
	for _, pt := range decomposition {
		chain = append(chain, struct {
			name string
			port int
		}{pt.name, p.parts[pt.name]})
	}
	chain = append(chain, struct {
		name string
		port int
	}{"protected", p.protected})
	prev := handlerNames(t, siteRoutes(t, cf, fmt.Sprintf("127.0.0.1:%d", p.bare)))
	if want := []string{"reverse_proxy"}; !slices.Equal(prev, want) {
		t.Fatalf("bare's handlers are %v, want %v", prev, want)
	}
	for i := 1; i < len(chain); i++ {
		got := handlerNames(t, siteRoutes(t, cf, fmt.Sprintf("127.0.0.1:%d", chain[i].port)))
		if !addsOne(prev, got) {
			t.Fatalf("%s's handlers %v are not %s's %v with one more", chain[i].name, got, chain[i-1].name, prev)
		}
		prev = got
	}
}

// addsOne says whether long is short with one element inserted.
func addsOne(short, long []string) bool {
	if len(long) != len(short)+1 {
		return false
	}
	for i := range long {
		if slices.Equal(slices.Delete(slices.Clone(long), i, i+1), short) {
			return true
		}
	}
	return false
}

// handlerNames lists the handlers of adapted routes in the order they run
// (subroutes and gateways flattened).
func handlerNames(t *testing.T, routes []any) []string {
	t.Helper()
	var names []string
	for _, r := range routes {
		hs, _ := r.(map[string]any)["handle"].([]any)
		for _, h := range hs {
			h := h.(map[string]any)
			if h["handler"] == "fulfilment_gateway" { // its jobs, in its order
				for _, job := range []string{"portal", "token", "auth", "subscriptions", "version"} {
					if j, ok := h[job].(map[string]any); ok {
						names = append(names, j["handler"].(string))
					}
				}
				continue
			}
			if sub, ok := h["routes"].([]any); ok {
				names = append(names, handlerNames(t, sub)...)
				continue
			}
			names = append(names, h["handler"].(string))
		}
	}
	return names
}
