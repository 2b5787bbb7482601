package caddymodule

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// demoVersionHandler is the demo Caddyfile's configuration.
func demoVersionHandler() *VersionHandler {
	return &VersionHandler{
		Upstream: "127.0.0.1:8081",
		Resources: map[string]string{
			"products": "items", "outbounds": "outbound-orders",
			"inbounds": "inbound-orders", "adjustments": "stock-adjustments",
		},
		Expose: []string{"shipments", "receipts", "labels"},
		Versions: []VersionConfig{
			{Name: "v4", UpstreamPrefix: "/wms"},
			{Name: "v3", UpstreamPrefix: "/wms/classic", Upstream: "127.0.0.1:9091", Deprecated: &DeprecationConfig{
				Since:     time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
				Sunset:    time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC),
				Successor: "v4",
			}},
		},
	}
}

// configContext returns a context of a loaded configuration that has only
// the fulfilment app (data dir in a temporary dir; nothing opened), as the
// handlers' Provision gets one.
func configContext(t *testing.T) caddy.Context {
	t.Helper()
	apps := caddy.ModuleMap{"fulfilment": caddyconfig.JSON(&App{DataDir: t.TempDir()}, nil)}
	base, err := caddy.ProvisionContext(&caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}, AppsRaw: apps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(base)
	t.Cleanup(cancel)
	return ctx
}

func provisionVersionHandler(t *testing.T, h *VersionHandler) {
	t.Helper()
	if err := h.Provision(configContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
}

// seen is what the next handler received.
type seen struct {
	called                      bool
	path, rawPath, escaped, raw string
	version, resource, upstream string
	header                      http.Header
}

// testPartner is the partner whose verified identity serveVersion's
// requests carry.
const testPartner = "partner-acme"

// serveVersion sends a GET of target, as the Bearer guard passes it on for
// testPartner, through h to a next handler that records what reached it.
func serveVersion(t *testing.T, h *VersionHandler, target string) (*httptest.ResponseRecorder, seen) {
	t.Helper()
	return serveVersionRequest(t, h, withVerifiedPartner(httptest.NewRequest(http.MethodGet, target, nil), testPartner))
}

// serveVersionRequest sends req through h to a next handler that records
// what reached it, like reverse_proxy would see it.
func serveVersionRequest(t *testing.T, h *VersionHandler, req *http.Request) (*httptest.ResponseRecorder, seen) {
	t.Helper()
	repl := caddy.NewReplacer()
	req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, repl))
	var s seen
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		s = seen{called: true, path: r.URL.Path, rawPath: r.URL.RawPath, escaped: r.URL.EscapedPath(), raw: r.URL.RawQuery}
		s.header = r.Header.Clone()
		s.version, _ = repl.GetString("fulfilment.version")
		s.resource, _ = repl.GetString("fulfilment.resource")
		s.upstream, _ = repl.GetString("fulfilment.upstream")
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	rec := httptest.NewRecorder()
	if err := h.ServeHTTP(rec, req, next); err != nil {
		t.Fatalf("ServeHTTP(%s): %v", req.URL, err)
	}
	return rec, s
}

func TestVersionHandlerRewrites(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for _, tc := range []struct {
		target, escaped, path, query, version, resource, upstream string
	}{
		{"/api/fulfilment/v4/products?page=2&page_size=5", "/wms/items", "/wms/items", "page=2&page_size=5", "v4", "products", "127.0.0.1:8081"},
		{"/api/fulfilment/v4/outbounds/o%201", "/wms/outbound-orders/o%201", "/wms/outbound-orders/o 1", "", "v4", "outbounds", "127.0.0.1:8081"},
		{"/api/fulfilment/v4/shipments/a!b", "/wms/shipments/a!b", "/wms/shipments/a!b", "", "v4", "shipments", "127.0.0.1:8081"},
		{"/api/fulfilment/v3/products/sku-1?x=%2e%2e", "/wms/classic/items/sku-1", "/wms/classic/items/sku-1", "x=%2e%2e", "v3", "products", "127.0.0.1:9091"},
		{"/v4/products", "/wms/items", "/wms/items", "", "v4", "products", "127.0.0.1:8081"},
		{"/v3/products?page=1", "/wms/classic/items", "/wms/classic/items", "page=1", "v3", "products", "127.0.0.1:9091"},
	} {
		rec, s := serveVersion(t, h, tc.target)
		if rec.Code != http.StatusNoContent || !s.called {
			t.Errorf("%s: status %d, next called %v: %s", tc.target, rec.Code, s.called, rec.Body)
			continue
		}
		if s.escaped != tc.escaped || s.path != tc.path || s.raw != tc.query {
			t.Errorf("%s: next saw escaped %q path %q query %q; want %q %q %q", tc.target, s.escaped, s.path, s.raw, tc.escaped, tc.path, tc.query)
		}
		if s.version != tc.version || s.resource != tc.resource || s.upstream != tc.upstream {
			t.Errorf("%s: placeholders version %q resource %q upstream %q", tc.target, s.version, s.resource, s.upstream)
		}
	}
}

// The upstream URL carries a RawPath only where the path's default
// encoding would differ from the mapped one (as url.URL.SetPath sets it):
// a plain path, or one whose escapes are the default ones, has none; an
// escaped reserved character or a '!' keeps its form.
func TestVersionHandlerSetsRawPathOnlyWhereNeeded(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for target, want := range map[string]string{
		"/api/fulfilment/v4/products":        "",
		"/api/fulfilment/v4/products/sku-1":  "",
		"/api/fulfilment/v4/outbounds/o%201": "",
		"/api/fulfilment/v4/outbounds/o%2C1": "/wms/outbound-orders/o%2C1",
		"/api/fulfilment/v4/shipments/a!b":   "/wms/shipments/a!b",
	} {
		_, s := serveVersion(t, h, target)
		if s.rawPath != want {
			t.Errorf("%s: upstream RawPath %q, want %q", target, s.rawPath, want)
		}
	}
}

func TestVersionHandlerDeprecationHeaders(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	rec, _ := serveVersion(t, h, "/api/fulfilment/v3/products/42")
	want := http.Header{
		"Deprecation": {"@1780272000"},
		"Sunset":      {"Wed, 30 Jun 2027 00:00:00 GMT"},
		"Link":        {`</api/fulfilment/v4/products/42>; rel="successor-version"`},
	}
	for k, v := range want {
		if got := rec.Header().Values(k); !reflect.DeepEqual(got, v) {
			t.Errorf("v3 %s = %q, want %q", k, got, v)
		}
	}
	rec, _ = serveVersion(t, h, "/api/fulfilment/v4/products/42")
	for k := range want {
		if got := rec.Header().Get(k); got != "" {
			t.Errorf("v4 carries %s: %q", k, got)
		}
	}
}

func TestVersionHandlerNoUpstreamPlaceholder(t *testing.T) {
	h := &VersionHandler{Expose: []string{"a"}, Versions: []VersionConfig{{Name: "v1", UpstreamPrefix: "/x"}}}
	provisionVersionHandler(t, h)
	_, s := serveVersion(t, h, "/api/fulfilment/v1/a")
	if !s.called || s.upstream != "" || s.escaped != "/x/a" {
		t.Fatalf("got %+v", s)
	}
}

func TestVersionHandlerRefuses(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for _, tc := range []struct {
		target string
		status int
		kind   string
	}{
		{"/api/fulfilment/v5/products", 404, "unknown-version"},
		{"/api/fulfilment/v2/products", 404, "unknown-version"},
		{"/api/fulfilment/vX/products", 404, "unknown-version"},
		{"/v5/products", 404, "unknown-version"},
		{"/api/fulfilment/v4", 404, "not-found"},
		{"/api/fulfilment/v4/_debug/requests", 404, "not-found"},
		{"/api/fulfilment/v4/_control/outage", 404, "not-found"},
		{"/v4/shipments", 404, "not-found"},
		{"/api/fulfilment/v4/changes", 404, "not-found"},
		{"/api/fulfilment/v4/changes?since=0", 404, "not-found"},
		{"/api/fulfilment/v3/changes", 404, "not-found"},
		{"/api/fulfilment/v4/items", 404, "not-found"},
		{"/api/fulfilment/v4/products/../../_debug/requests", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/%2e%2e/%2e%2e/_debug/requests", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/..%2f..%2f_debug", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/%5c..%5c_debug", 400, "invalid-path"},
		{"/api/fulfilment/v4/products//x", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/..;/_debug", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/%00", 400, "invalid-path"},
		{"/api/fulfilment/v4/products/%252e%252e", 400, "invalid-path"},
	} {
		rec, s := serveVersion(t, h, tc.target)
		if s.called {
			t.Errorf("%s reached the next handler at %q", tc.target, s.escaped)
		}
		if rec.Code != tc.status || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %q, want %d problem+json", tc.target, rec.Code, rec.Header().Get("Content-Type"), tc.status)
			continue
		}
		var p problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Errorf("%s: body %q: %v", tc.target, rec.Body, err)
			continue
		}
		if p.Status != tc.status || p.Type != problemTypeBase+tc.kind || p.Detail == "" {
			t.Errorf("%s: problem %+v", tc.target, p)
		}
		if tc.kind == "unknown-version" {
			if !reflect.DeepEqual(p.Versions, []string{"v4", "v3"}) || !strings.Contains(p.Detail, "v4, v3") {
				t.Errorf("%s: versions %v detail %q", tc.target, p.Versions, p.Detail)
			}
		}
		if rec.Header().Get("Deprecation") != "" {
			t.Errorf("%s: refusal carries Deprecation", tc.target)
		}
	}
}

func TestVersionHandlerOpaqueTarget(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	req := withVerifiedPartner(httptest.NewRequest(http.MethodGet, "/", nil), testPartner)
	req.URL.Opaque = "//evil/wms/_debug"
	rec := httptest.NewRecorder()
	called := false
	_ = h.ServeHTTP(rec, req, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { called = true; return nil }))
	if called || rec.Code != http.StatusBadRequest {
		t.Fatalf("opaque target: status %d, next called %v", rec.Code, called)
	}
}

func TestVersionHandlerProvisionRefuses(t *testing.T) {
	base := func(mod func(*VersionHandler)) *VersionHandler {
		h := demoVersionHandler()
		mod(h)
		return h
	}
	for name, tc := range map[string]struct {
		h    *VersionHandler
		want string
	}{
		"no versions":       {&VersionHandler{}, "no versions configured"},
		"upstream scheme":   {base(func(h *VersionHandler) { h.Upstream = "http://127.0.0.1:8081" }), "without a scheme"},
		"upstream no port":  {base(func(h *VersionHandler) { h.Upstream = "127.0.0.1" }), "upstream"},
		"upstream range":    {base(func(h *VersionHandler) { h.Versions[0].Upstream = "127.0.0.1:80-90" }), "exactly one port"},
		"bad prefix":        {base(func(h *VersionHandler) { h.Versions[0].UpstreamPrefix = "/wms/../x" }), "upstream prefix"},
		"bad map":           {base(func(h *VersionHandler) { h.Resources["x"] = "../y" }), "upstream path"},
		"unknown successor": {base(func(h *VersionHandler) { h.Versions[1].Deprecated.Successor = "v9" }), "not a served version"},
		"sunset first": {base(func(h *VersionHandler) {
			h.Versions[1].Deprecated.Sunset = h.Versions[1].Deprecated.Since.Add(-time.Hour)
		}), "before the deprecation date"},
		"bad base": {base(func(h *VersionHandler) { h.BasePath = "api" }), "base path"},
		"serves nothing": {&VersionHandler{Versions: []VersionConfig{{Name: "v1", UpstreamPrefix: "/wms"}}},
			`version "v1" serves no resource`},
		"expose and map":    {base(func(h *VersionHandler) { h.Expose = append(h.Expose, "products") }), `"products" is also mapped`},
		"expose not a name": {base(func(h *VersionHandler) { h.Versions[0].Expose = []string{"_debug"} }), `expose: name "_debug"`},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		err := tc.h.Provision(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "fulfilment_version:") {
			t.Errorf("%s: Provision error %v, want it to mention %q", name, err, tc.want)
		}
		if err := tc.h.Validate(); err == nil {
			t.Errorf("%s: Validate accepted", name)
		}
	}
}

func TestVersionHandlerJSONRoundTrip(t *testing.T) {
	h := demoVersionHandler()
	h.ShortLabels = []string{}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back VersionHandler
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ShortLabels == nil || len(back.ShortLabels) != 0 {
		t.Fatalf("empty short_labels lost in JSON %s", b)
	}
	if !reflect.DeepEqual(back.Versions, h.Versions) || !reflect.DeepEqual(back.Expose, h.Expose) {
		t.Fatalf("versions or expose changed in JSON round trip: %s", b)
	}
	if !strings.Contains(string(b), `"expose":["shipments","receipts","labels"]`) || strings.Contains(string(b), "pass_unmapped") {
		t.Fatalf("JSON %s", b)
	}
	provisionVersionHandler(t, &back)
	if rec, s := serveVersion(t, &back, "/v4/products"); s.called || rec.Code != 404 {
		t.Fatalf("short label served with short_labels []: %d", rec.Code)
	}
}

// TestVersionHandlerPassUnmapped: pass_unmapped (JSON) restores the
// pass-through of unmapped plain names, which reaches e.g. the WMS's
// /wms/changes; without it the same request is a 404 that never reaches the
// next handler.
func TestVersionHandlerPassUnmapped(t *testing.T) {
	var h VersionHandler
	if err := json.Unmarshal([]byte(`{"pass_unmapped":true,"versions":[{"name":"v4","upstream_prefix":"/wms","expose":["shipments"]}]}`), &h); err != nil {
		t.Fatal(err)
	}
	if !h.PassUnmapped || !reflect.DeepEqual(h.Versions[0].Expose, []string{"shipments"}) {
		t.Fatalf("decoded %+v", h)
	}
	provisionVersionHandler(t, &h)
	if _, s := serveVersion(t, &h, "/api/fulfilment/v4/changes?since=1"); !s.called || s.escaped != "/wms/changes" || s.raw != "since=1" {
		t.Fatalf("pass_unmapped: %+v", s)
	}
	h.PassUnmapped = false
	h.table = nil
	provisionVersionHandler(t, &h)
	if rec, s := serveVersion(t, &h, "/api/fulfilment/v4/changes"); s.called || rec.Code != http.StatusNotFound {
		t.Fatalf("without pass_unmapped: %d, next called %v", rec.Code, s.called)
	}
	if _, s := serveVersion(t, &h, "/api/fulfilment/v4/shipments/s1"); !s.called || s.escaped != "/wms/shipments/s1" {
		t.Fatalf("version expose: %+v", s)
	}
}
