package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// The demo serves GET and HEAD (the default methods): every other method,
// with a valid token, answers 405 problem+json with Allow: GET, HEAD, and
// never reaches the WMS; GET and HEAD still do.
func TestVersioningServesOnlyItsMethods(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	auth := gatewayHeaders(t, g.Base)
	g.clearLog(t)
	for _, path := range []string{"/api/fulfilment/v4/products", "/api/fulfilment/v3/outbounds", "/v4/products/ITM-000001", "/api/fulfilment/v4/shipments"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace, "PROPFIND"} {
			status, h, body := do(t, method, g.Base+path, strings.NewReader(`{"partner":"partner-globex"}`),
				append([]string{"Content-Type", "application/json"}, auth...)...)
			if p := isProblem(t, method+" "+path, status, h, body, http.StatusMethodNotAllowed); p != nil && !strings.HasSuffix(p["type"].(string), "#method-not-allowed") {
				t.Errorf("%s %s: problem %s, want type method-not-allowed", method, path, body)
			}
			if got := h.Get("Allow"); got != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q, want \"GET, HEAD\"", method, path, got)
			}
		}
	}
	if got := g.proxied(t); len(got) != 0 {
		for _, r := range got {
			t.Errorf("a refused method reached the WMS: %s %s", r.Method, r.Path)
		}
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		if status, _, body := do(t, method, g.Base+"/api/fulfilment/v4/products", nil, auth...); status != http.StatusOK {
			t.Errorf("%s products: %d %s, want 200", method, status, body)
		}
	}
	if got := g.proxied(t); len(got) != 2 {
		t.Errorf("GET and HEAD reached the WMS %d times, want 2", len(got))
	}
}
