package versions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// placeholdersAfter sends a GET of target through h and returns what the
// next handler's replacer knows of each key (nil when it is unknown).
func placeholdersAfter(t *testing.T, h *VersionHandler, target string, keys ...string) map[string]any {
	t.Helper()
	repl := caddy.NewReplacer()
	req := withVerifiedPartner(httptest.NewRequest(http.MethodGet, target, nil), testPartner)
	req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, repl))
	got := map[string]any{}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		for _, k := range keys {
			if v, ok := repl.Get(k); ok {
				got[k] = v
			}
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	rec := httptest.NewRecorder()
	if err := h.ServeHTTP(rec, req, next); err != nil || rec.Code != http.StatusNoContent {
		t.Fatalf("%s: status %d, error %v: %s", target, rec.Code, err, rec.Body)
	}
	return got
}

func TestPlaceholdersOfAResourceOnlyPassUnmappedServes(t *testing.T) {
	h := &VersionHandler{Expose: []string{"a"}, PassUnmapped: true, Upstream: "127.0.0.1:8081",
		Versions: []VersionConfig{{Name: "v1", UpstreamPrefix: "/x"}, {Name: "v2", UpstreamPrefix: "/y"}}}
	provisionVersionHandler(t, h)
	for target, want := range map[string]map[string]any{
		"/api/fulfilment/v1/a":       {"fulfilment.version": "v1", "fulfilment.resource": "a", "fulfilment.upstream": "127.0.0.1:8081"},
		"/api/fulfilment/v2/other/7": {"fulfilment.version": "v2", "fulfilment.resource": "other", "fulfilment.upstream": "127.0.0.1:8081"},
	} {
		got := placeholdersAfter(t, h, target, "fulfilment.version", "fulfilment.resource", "fulfilment.upstream")
		if len(got) != len(want) {
			t.Errorf("%s: placeholders %v, want %v", target, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", target, k, got[k], v)
			}
		}
	}
}

// Only the three placeholders are answered, and {fulfilment.upstream}
// only when an upstream is configured: an unknown placeholder stays
// unknown, so a Caddyfile that misspells one sees it unreplaced.
func TestPlaceholdersUnknownStayUnknown(t *testing.T) {
	h := &VersionHandler{Expose: []string{"a"}, Versions: []VersionConfig{{Name: "v1", UpstreamPrefix: "/x"}}}
	provisionVersionHandler(t, h)
	got := placeholdersAfter(t, h, "/api/fulfilment/v1/a",
		"fulfilment.upstream", "fulfilment.versions", "fulfilment", "fulfilment.partner_id", "fulfilment.version")
	if len(got) != 1 || got["fulfilment.version"] != "v1" {
		t.Fatalf("known placeholders %v, want only fulfilment.version", got)
	}
}

// A mapped resource's placeholders are made when the handler is
// provisioned: a request allocates nothing for them.
func TestPlaceholdersOfAMappedResourceAllocateNothing(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	m, err := h.table.Map("/api/fulfilment/v3/products/42")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { providerSink, upstreamSink = h.placeholders.of(m) }); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
	f, upstream := h.placeholders.of(m)
	if v, _ := f("fulfilment.version"); v != "v3" {
		t.Errorf("fulfilment.version = %v", v)
	}
	if v, _ := f("fulfilment.resource"); v != "products" {
		t.Errorf("fulfilment.resource = %v", v)
	}
	if upstream != "127.0.0.1:9091" {
		t.Errorf("fulfilment.upstream = %v", upstream)
	}
}

// providerSink and upstreamSink keep the values on the heap, as a
// replacer does.
var (
	providerSink caddy.ReplacerFunc
	upstreamSink any
)
