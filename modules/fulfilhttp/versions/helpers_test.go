package versions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
)

// withVerifiedPartner returns a request as the Bearer guard passes it on.
var withVerifiedPartner = fulfilmenttest.WithVerifiedPartner

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
// the fulfilment app, as the handlers' Provision gets one.
var configContext = fulfilmenttest.ConfigContext

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
