package versions

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	caddymap "github.com/caddyserver/caddy/v2/modules/caddyhttp/map"
)

// The version placeholders meet values the rest of the configuration put
// into the same replacer: Caddy's map directive (ordered before every
// fulfilment directive in a Caddyfile), another handler's static value,
// and a second pass through a version handler in the site's error routes.

// placeholderKeys are the three placeholders the handler answers.
var placeholderKeys = []string{placeholderVersion, placeholderResource, placeholderUpstream}

// chainThrough sends req (whose context has a replacer and the guard's
// identity) through before, in order, then h, to a next handler that
// records what the replacer knows of each placeholder then; nil for one
// that is unknown.
func chainThrough(t *testing.T, req *http.Request, h *VersionHandler, before ...caddyhttp.MiddlewareHandler) (int, map[string]any) {
	t.Helper()
	repl := req.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	got := map[string]any{}
	var chain caddyhttp.Handler = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		for _, k := range placeholderKeys {
			if v, ok := repl.Get(k); ok {
				got[k] = v
			}
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	chain = wrap(h, chain)
	for i := len(before) - 1; i >= 0; i-- {
		chain = wrap(before[i], chain)
	}
	rec := httptest.NewRecorder()
	if err := chain.ServeHTTP(rec, req); err != nil {
		t.Fatalf("%s: %v", req.URL, err)
	}
	return rec.Code, got
}

func wrap(mw caddyhttp.MiddlewareHandler, next caddyhttp.Handler) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return mw.ServeHTTP(w, r, next)
	})
}

// caddyRequest is a GET of target as Caddy's server hands it to the
// routes (a replacer with the http.* placeholders) after the guard
// admitted testPartner.
func caddyRequest(target string, header ...string) *http.Request {
	req := withVerifiedPartner(httptest.NewRequest(http.MethodGet, target, nil), testPartner)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	caddyhttp.NewTestReplacer(req)
	return req
}

// decoy is a dial address the configuration under test never names for
// the upstream (nothing is dialled in these tests).
const decoy = "127.0.0.1:9"

// A map directive writing {fulfilment.upstream} (here from a request
// header, with a default) runs before the version handler in a
// Caddyfile. The upstream the handler's configuration names for the
// version is what reverse_proxy {fulfilment.upstream} dials, whatever the
// map or the request say: neither can send the request elsewhere.
func TestPlaceholderUpstreamIsNotOverriddenByAnEarlierMap(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	m := &caddymap.Handler{
		Source:       "{http.request.header.X-Warehouse}",
		Destinations: []string{"{" + placeholderUpstream + "}"},
		Mappings:     []caddymap.Mapping{{InputRegexp: "^(.+)$", Outputs: []any{"${1}"}}},
		Defaults:     []string{decoy},
	}
	if err := m.Provision(configContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, header, want string
	}{
		{"/api/fulfilment/v4/products", "", "127.0.0.1:8081"},
		{"/api/fulfilment/v4/products", decoy, "127.0.0.1:8081"},
		{"/api/fulfilment/v3/products", decoy, "127.0.0.1:9091"},
		{"/v3/products", decoy, "127.0.0.1:9091"},
	} {
		code, got := chainThrough(t, caddyRequest(tc.target, "X-Warehouse", tc.header), h, m)
		if code != http.StatusNoContent || got[placeholderUpstream] != tc.want {
			t.Errorf("%s with X-Warehouse %q after a map of it: status %d, {fulfilment.upstream} = %v; want %s, the version's configured upstream",
				tc.target, tc.header, code, got[placeholderUpstream], tc.want)
		}
	}
}

// A value another handler set as the replacer's static value before the
// version handler ran does not outlive the version's upstream.
func TestPlaceholderUpstreamIsNotOverriddenByAnEarlierStaticValue(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	setter := caddyhttp.MiddlewareHandler(middleware(func(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
		r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer).Set(placeholderUpstream, decoy)
		return next.ServeHTTP(w, r)
	}))
	code, got := chainThrough(t, caddyRequest("/api/fulfilment/v3/products"), h, setter)
	if code != http.StatusNoContent || got[placeholderUpstream] != "127.0.0.1:9091" {
		t.Errorf("status %d, {fulfilment.upstream} = %v after an earlier handler set %s; want v3's 127.0.0.1:9091",
			code, got[placeholderUpstream], decoy)
	}
}

// middleware is a caddyhttp.MiddlewareHandler made of a function.
type middleware func(http.ResponseWriter, *http.Request, caddyhttp.Handler) error

func (f middleware) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return f(w, r, next)
}

// A version handler in the site's error routes (say, one that sends a
// version to a standby WMS when the proxy could not reach its own) maps
// the request again, as Caddy hands it to those routes: the original URL
// back, the same replacer and variables, the error in the context. The
// placeholders then are the second mapping's, as reverse_proxy
// {fulfilment.upstream} after it must dial the standby.
func TestPlaceholdersOfAVersionHandlerInTheErrorRoutes(t *testing.T) {
	primary := demoVersionHandler()
	provisionVersionHandler(t, primary)
	standby := &VersionHandler{
		Upstream: "127.0.0.1:7071",
		Expose:   []string{"products", "labels"},
		Versions: []VersionConfig{{Name: "v4", UpstreamPrefix: "/standby"}, {Name: "v2", UpstreamPrefix: "/old"}},
	}
	provisionVersionHandler(t, standby)

	req := caddyRequest("/api/fulfilment/v4/products/42")
	orig := *req.URL
	if code, got := chainThrough(t, req, primary); code != http.StatusNoContent || got[placeholderUpstream] != "127.0.0.1:8081" {
		t.Fatalf("first pass: status %d, placeholders %v", code, got)
	}
	for _, tc := range []struct{ target, version, resource string }{
		{orig.String(), "v4", "products"},
		{"/api/fulfilment/v2/labels", "v2", "labels"}, // the error route rewrote it
	} {
		u := orig
		if tc.target != orig.String() {
			u = *httptest.NewRequest(http.MethodGet, tc.target, nil).URL
		}
		*req.URL = u
		inErrors := req.WithContext(context.WithValue(req.Context(), caddyhttp.ErrorCtxKey, errors.New("dial refused")))
		code, got := chainThrough(t, inErrors, standby)
		want := map[string]any{placeholderVersion: tc.version, placeholderResource: tc.resource, placeholderUpstream: "127.0.0.1:7071"}
		if code != http.StatusNoContent || len(got) != len(want) {
			t.Errorf("error route, %s: status %d, placeholders %v; want %v", tc.target, code, got, want)
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("error route, %s: {%s} = %v, want %v (the error route's mapping)", tc.target, k, got[k], v)
			}
		}
	}
}

// A request the handler refuses before it maps the path leaves the three
// placeholders unknown (not empty), as before it was mapped.
func TestPlaceholdersUnknownWhenRefusedBeforeMapping(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for _, tc := range []struct {
		req  *http.Request
		want int
	}{
		{caddyRequest("/api/fulfilment/v9/products"), http.StatusNotFound},
		{caddyRequest("/api/fulfilment/v4/_debug"), http.StatusNotFound},
		{caddyRequest("/api/fulfilment/v4/products/%2e%2e/changes"), http.StatusBadRequest},
		{func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil)
			caddyhttp.NewTestReplacer(r)
			return r
		}(), http.StatusInternalServerError},
	} {
		repl := tc.req.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		rec := httptest.NewRecorder()
		if err := h.ServeHTTP(rec, tc.req, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
			t.Errorf("%s reached the next handler", tc.req.URL)
			return nil
		})); err != nil || rec.Code != tc.want {
			t.Errorf("%s: status %d, error %v; want %d", tc.req.URL, rec.Code, err, tc.want)
		}
		for _, k := range placeholderKeys {
			if v, ok := repl.Get(k); ok {
				t.Errorf("%s (refused %d): {%s} known as %q, want unknown", tc.req.URL, rec.Code, k, v)
			}
		}
	}
}
