package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"
)

// The protected site measures what partners get: adapted to JSON, its
// routes have the same matchers and the same handlers, in the same order,
// as the gateway site of the demo Caddyfile. (Handler options, such as the
// version mapping's table, may differ.)
func TestProtectedSiteIsTheDemosShape(t *testing.T) {
	want := demoRoutes(t)
	got := routeShapes(t, []byte(benchCaddyfile(testPorts(), t.TempDir())),
		func(s server) bool { return slices.Contains(s.Listen, "127.0.0.1:3") })
	if !slices.Equal(got, want) {
		t.Fatalf("the protected site's routes:\n%s\nthe demo's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The demo's gateway site guards every path but the partner portal's and
// the token endpoint's: adapted, it is one route without a matcher whose
// first handler is fulfilment_gateway (its portal and token endpoint
// answer only their own paths, its guard every other request). (A handler
// Caddy orders before the gateway, such as respond or handle, would add a
// route before it and fail this.)
func TestDemoSiteGuardsEveryPathButTheTokenEndpoint(t *testing.T) {
	got := demoRoutes(t)
	want := []string{
		` -> fulfilment_gateway reverse_proxy`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the demo's gateway routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// demoRoutes describes the routes of the demo Caddyfile's gateway site
// (the site that is not the WMS simulator).
func demoRoutes(t *testing.T) []string {
	t.Helper()
	demo, err := os.ReadFile("../../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	return routeShapes(t, demo, func(s server) bool { return !s.handles("wms_simulator") })
}

type server struct {
	Listen []string `json:"listen"`
	Routes []struct {
		Match  json.RawMessage `json:"match"`
		Handle []struct {
			Handler string `json:"handler"`
		} `json:"handle"`
		Terminal bool `json:"terminal"`
	} `json:"routes"`
}

func (s server) handles(name string) bool {
	for _, r := range s.Routes {
		for _, h := range r.Handle {
			if h.Handler == name {
				return true
			}
		}
	}
	return false
}

// routeShapes adapts a Caddyfile and describes each route of the one
// server that pick selects: its matchers (JSON), handlers and terminality.
func routeShapes(t *testing.T, caddyfile []byte, pick func(server) bool) []string {
	t.Helper()
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(caddyfile, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Apps struct {
			HTTP struct {
				Servers map[string]server `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	var shapes []string
	picked := 0
	for _, s := range c.Apps.HTTP.Servers {
		if !pick(s) {
			continue
		}
		picked++
		for _, r := range s.Routes {
			var hs []string
			for _, h := range r.Handle {
				hs = append(hs, h.Handler)
			}
			shapes = append(shapes, string(r.Match)+" -> "+strings.Join(hs, " ")+map[bool]string{true: " (terminal)"}[r.Terminal])
		}
	}
	if picked != 1 {
		t.Fatalf("%d servers match, want 1", picked)
	}
	return shapes
}
