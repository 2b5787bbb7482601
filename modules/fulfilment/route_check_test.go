package fulfilment

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	maphandler "github.com/caddyserver/caddy/v2/modules/caddyhttp/map"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// The checks read a route the same from its JSON (before Caddy provisions
// it) and from its provisioned modules (after): the fulfilment app may be
// provisioned before, during or after the http app.
func TestRouteNodesReadJSONAndProvisionedRoutesAlike(t *testing.T) {
	var raw caddyhttp.RouteList
	if err := json.Unmarshal([]byte(`[
		{"match": [{"path": ["/api/auth/token"]}], "handle": [{"handler": "fulfilment_token"}]},
		{"match": [{"method": ["GET"]}, {"path_regexp": {"pattern": "^/x"}}], "group": "g", "terminal": true,
		 "handle": [{"handler": "fulfilment_auth"}, {"handler": "subroute", "routes": [
			{"handle": [{"handler": "fulfilment_version"}, {"handler": "reverse_proxy"}]}]}]}
	]`), &raw); err != nil {
		t.Fatal(err)
	}
	provisioned := caddyhttp.RouteList{
		{MatcherSets: caddyhttp.MatcherSets{{&caddyhttp.MatchPath{"/api/auth/token"}}},
			Handlers: []caddyhttp.MiddlewareHandler{handlerNamed("fulfilment_token")}},
		{MatcherSets: caddyhttp.MatcherSets{{&caddyhttp.MatchMethod{"GET"}}, {&caddyhttp.MatchPathRE{}}}, Group: "g", Terminal: true,
			Handlers: []caddyhttp.MiddlewareHandler{handlerNamed("fulfilment_auth"), &caddyhttp.Subroute{Routes: caddyhttp.RouteList{
				{Handlers: []caddyhttp.MiddlewareHandler{handlerNamed("fulfilment_version"), &reverseproxy.Handler{}}}}}}},
	}
	want := []routeNode{
		{matched: true, pathMatch: true, handlers: []handlerNode{{name: "fulfilment_token"}}},
		{matched: true, group: "g", terminal: true, handlers: []handlerNode{{name: "fulfilment_auth"}, {name: "subroute",
			routes: []routeNode{{handlers: []handlerNode{{name: "fulfilment_version"}, {name: "reverse_proxy"}}}}}}},
	}
	readAlike(t, raw, provisioned, want)
}

// readAlike checks that the checks read both forms of the same routes,
// raw (JSON) and provisioned, as want.
func readAlike(t *testing.T, raw, provisioned caddyhttp.RouteList, want []routeNode) {
	t.Helper()
	for form, routes := range map[string]caddyhttp.RouteList{"JSON": raw, "provisioned": provisioned} {
		got, err := routeNodes(routes)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s routes read as\n%+v\nwant\n%+v", form, got, want)
		}
	}
}

// namedHandler stands for a provisioned handler module of the given name:
// the checks know handlers by module name only (the real handlers' packages
// import this one).
type namedHandler struct {
	caddyhttp.MiddlewareHandler
	name string
}

func (h namedHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: caddy.ModuleID("http.handlers." + h.name)}
}

func handlerNamed(name string) caddyhttp.MiddlewareHandler { return namedHandler{name: name} }

// checkJSON runs the checks on one server's routes given as JSON.
func checkJSON(t *testing.T, routes string) routeFindings {
	t.Helper()
	var rl caddyhttp.RouteList
	if err := json.Unmarshal([]byte(routes), &rl); err != nil {
		t.Fatal(err)
	}
	f, err := checkHTTPRoutes(&caddyhttp.App{Servers: map[string]*caddyhttp.Server{"srv0": {Routes: rl}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRouteChecks(t *testing.T) {
	const (
		guard   = `{"handler": "fulfilment_auth"}`
		version = `{"handler": "fulfilment_version"}`
		proxy   = `{"handler": "reverse_proxy"}`
	)
	for _, tc := range []struct {
		name, routes    string
		errors, warning string // parts of the one error and the one warning; "" for none
	}{
		{"guard, version, proxy", `[{"handle": [` + guard + `,` + version + `,` + proxy + `]}]`, "", ""},
		{"no guard", `[{"handle": [` + version + `,` + proxy + `]}]`, "no fulfilment_auth before it", ""},
		{"guard after", `[{"handle": [` + version + `,` + guard + `,` + proxy + `]}]`, "no fulfilment_auth before it", ""},
		{"guard in a later route", `[{"handle": [` + version + `,` + proxy + `]}, {"handle": [` + guard + `]}]`,
			"no fulfilment_auth before it", ""},
		{"guard in an earlier matched route", `[{"match": [{"path": ["/a"]}], "handle": [` + guard + `]}, {"handle": [` + version + `,` + proxy + `]}]`,
			"", "only for some requests"},
		{"guard in an earlier route of the same group",
			`[{"group": "g", "match": [{"path": ["/a"]}], "handle": [` + guard + `]}, {"group": "g", "handle": [` + version + `,` + proxy + `]}]`,
			"no fulfilment_auth before it", ""},
		{"guard in an earlier route of another group",
			`[{"group": "h", "handle": [` + guard + `]}, {"group": "g", "handle": [` + version + `,` + proxy + `]}]`,
			"", "only for some requests"},
		{"guard in an earlier unmatched route", `[{"handle": [` + guard + `]}, {"handle": [` + version + `,` + proxy + `]}]`, "", ""},
		{"guard in an earlier subroute", `[{"handle": [{"handler": "subroute", "routes": [{"handle": [` + guard + `]}]}, ` + version + `,` + proxy + `]}]`, "", ""},
		{"guard in an enclosing route", `[{"match": [{"path": ["/api/*"]}], "handle": [` + guard + `, {"handler": "subroute", "routes": [{"handle": [` + version + `,` + proxy + `]}]}]}]`, "", ""},
		{"a terminal route before", `[{"terminal": true, "handle": [{"handler": "static_response"}]}, {"handle": [` + version + `]}]`, "", ""},
		{"no terminal handler", `[{"handle": [` + guard + `,` + version + `, {"handler": "headers"}]}]`, "", "no handler after it"},
		{"proxy in a later route", `[{"handle": [` + guard + `,` + version + `]}, {"match": [{"path": ["/x"]}], "handle": [` + proxy + `]}]`, "", ""},
		{"proxy after a terminal route ends", `[{"terminal": true, "handle": [` + guard + `,` + version + `]}, {"handle": [` + proxy + `]}]`, "", "no handler after it"},
		{"proxy after the enclosing subroute", `[{"handle": [` + guard + `, {"handler": "subroute", "routes": [{"handle": [` + version + `]}]}, ` + proxy + `]}]`, "", ""},
		{"token without a matcher", `[{"handle": [{"handler": "fulfilment_token"}]}]`, "", "fulfilment_token has no path matcher"},
		{"token with a host matcher only", `[{"match": [{"host": ["a"]}], "handle": [{"handler": "fulfilment_token"}]}]`, "", "fulfilment_token has no path matcher"},
		{"token with a path in one matcher set only", `[{"match": [{"path": ["/t"]}, {"method": ["POST"]}], "handle": [{"handler": "fulfilment_token"}]}]`, "", "fulfilment_token has no path matcher"},
		{"token under a path-matched route", `[{"match": [{"path": ["/t"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_token"}]}]}]}]`, "", ""},
		{"token with a path of its own", `[{"handle": [{"handler": "fulfilment_token", "path": "/api/auth/token"}]}]`, "", ""},
		{"portal without a prefix before the guard", `[{"handle": [{"handler": "fulfilment_portal"}, ` + guard + `]}]`, "", "fulfilment_portal has no prefix"},
		{"portal with a prefix before the guard", `[{"handle": [{"handler": "fulfilment_portal", "prefix": "/portal"}, ` + guard + `]}]`, "", ""},
		{"portal alone, a site of its own", `[{"handle": [{"handler": "fulfilment_portal"}]}]`, "", ""},
		{"gateway, proxy", `[{"handle": [{"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", ""},
		{"gateway, then a version mapping", `[{"handle": [{"handler": "fulfilment_gateway"}, ` + version + `,` + proxy + `]}]`, "", "fulfilment_gateway and fulfilment_version in one server"},
		{"a guard, then a gateway", `[{"handle": [` + guard + `, {"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", "fulfilment_gateway and fulfilment_auth in one server"},
		{"a token endpoint in a subroute beside a gateway", `[{"handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_token", "path": "/t"}]}]}, {"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", "fulfilment_gateway and fulfilment_token in one server"},
		{"gateway without a proxy", `[{"handle": [{"handler": "fulfilment_gateway"}, {"handler": "headers"}]}]`, "", "fulfilment_gateway has no handler after it"},
		{"gateway, proxy in a later route", `[{"handle": [{"handler": "fulfilment_gateway"}]}, {"handle": [` + proxy + `]}]`, "", ""},
		{"gateway with a matcher, proxy in a later route", `[{"match": [{"path": ["/api/*"]}], "handle": [{"handler": "fulfilment_gateway"}]}, {"handle": [` + proxy + `]}]`, "", "reverse_proxy runs for requests that did not pass fulfilment_gateway"},
		{"gateway in a handle block, proxy after it", `[{"group": "g", "match": [{"path": ["/api/*"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_gateway"}]}]}]}, {"handle": [` + proxy + `]}]`, "", "reverse_proxy runs for requests that did not pass fulfilment_gateway"},
		{"gateway with a matcher, proxy in its route", `[{"match": [{"path": ["/api/*"]}], "handle": [{"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", ""},
		{"two sites of one server, one with a gateway", `[{"match": [{"host": ["api.example.com"]}], "terminal": true, "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_gateway"}, ` + proxy + `]}]}]}, {"match": [{"host": ["docs.example.com"]}], "terminal": true, "handle": [{"handler": "subroute", "routes": [{"handle": [` + proxy + `]}]}]}]`, "", ""},
		{"a site whose gateway has a matcher, beside another site", `[{"match": [{"host": ["docs.example.com"]}], "terminal": true, "handle": [` + proxy + `]}, {"match": [{"host": ["api.example.com"]}], "terminal": true, "handle": [{"handler": "subroute", "routes": [{"match": [{"path": ["/api/*"]}], "handle": [{"handler": "fulfilment_gateway"}]}, {"handle": [` + proxy + `]}]}]}]`, "", "reverse_proxy runs for requests that did not pass fulfilment_gateway"},
		{"gateway and proxy in a handle block", `[{"group": "g", "match": [{"path": ["/api/*"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_gateway"}, ` + proxy + `]}]}]}]`, "", ""},
		{"a map writing the version's placeholders before a gateway", `[{"handle": [{"handler": "map", "source": "{http.request.header.X-V}", "destinations": ["{fulfilment.resource}", "{other}", "{fulfilment.upstream}"]}, {"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", "map writes {fulfilment.resource}, {fulfilment.upstream}, a placeholder of the version mapping"},
		{"a map writing other placeholders", `[{"handle": [{"handler": "map", "source": "{http.request.header.X-V}", "destinations": ["{fulfilment_version}", "{my.fulfilment.version}"]}, {"handler": "fulfilment_gateway"}, ` + proxy + `]}]`, "", ""},
		{"portal under a path-matched route", `[{"match": [{"path": ["/portal/*"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "fulfilment_portal"}]}]}]}, {"handle": [` + guard + `]}]`, "", ""},
	} {
		f := checkJSON(t, tc.routes)
		if got := strings.Join(f.errors, "\n"); (tc.errors == "") != (got == "") || !strings.Contains(got, tc.errors) || len(f.errors) > 1 {
			t.Errorf("%s: errors %q, want one saying %q (or none if empty)", tc.name, f.errors, tc.errors)
		}
		if got := strings.Join(f.warnings, "\n"); (tc.warning == "") != (got == "") || !strings.Contains(got, tc.warning) || len(f.warnings) > 1 {
			t.Errorf("%s: warnings %q, want one saying %q (or none if empty)", tc.name, f.warnings, tc.warning)
		}
	}
}

// The error names where the handler is: server, routes and handlers by
// index, as Caddy's own errors do.
func TestRouteCheckNamesThePlace(t *testing.T) {
	f := checkJSON(t, `[{"handle": [{"handler": "headers"}, {"handler": "subroute", "routes": [{}, {"handle": [{"handler": "fulfilment_version"}, {"handler": "reverse_proxy"}]}]}]}]`)
	if len(f.errors) != 1 || !strings.HasPrefix(f.errors[0], "server srv0, route 0, handler 1, subroute, route 1, handler 0: fulfilment_version") {
		t.Errorf("errors %q, want one naming server srv0, route 0, handler 1, subroute, route 1, handler 0", f.errors)
	}
}

// A map's destinations read the same from its JSON (with braces) and its
// provisioned module (without).
func TestRouteNodesReadAMapsDestinationsAlike(t *testing.T) {
	var raw caddyhttp.RouteList
	if err := json.Unmarshal([]byte(`[{"handle": [{"handler": "map", "destinations": ["{fulfilment.version}", "{x}"]}]}]`), &raw); err != nil {
		t.Fatal(err)
	}
	provisioned := caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{
		&maphandler.Handler{Destinations: []string{"fulfilment.version", "x"}}}}}
	want := []routeNode{{handlers: []handlerNode{{name: "map", writes: []string{"fulfilment.version"}}}}}
	readAlike(t, raw, provisioned, want)
}
