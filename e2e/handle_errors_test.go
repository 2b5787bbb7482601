package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A site's handle_errors routes answer a versioned request whose proxy
// cannot reach the WMS, as they answer Caddy's own handlers' errors; the
// guard still runs first, and the gateway's headers (the request id) stay
// on the answer. The same site without handle_errors answers a 502 problem.
func TestHandleErrorsAnswersAVersionedRouteTheWMSCannotServe(t *testing.T) {
	t.Parallel()
	const proxyLine = "reverse_proxy 127.0.0.1:{$WMS_PORT:8081} {"
	demo := repoCaddyfile(t)
	if strings.Count(demo, proxyLine) != 1 {
		t.Fatalf("the demo Caddyfile no longer has exactly one %q: adapt this test", proxyLine)
	}
	// Nothing listens on a free port: every proxy attempt is refused.
	down := strings.Replace(demo, proxyLine, fmt.Sprintf("reverse_proxy 127.0.0.1:%d {", freePort(t)), 1)
	withErrors := strings.Replace(down, "\tfulfilment_gateway {\n", "\thandle_errors {\n"+
		"\t\theader Content-Type text/plain\n"+
		"\t\trespond \"handled by handle_errors: {err.status_code}\" 599\n"+
		"\t}\n\n\tfulfilment_gateway {\n", 1)
	if withErrors == down {
		t.Fatal("the demo Caddyfile has no fulfilment_gateway block to put handle_errors beside: adapt this test")
	}

	g := startRepoGateway(t, withErrors)
	auth := gatewayHeaders(t, g.Base)
	status, h, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil, auth...)
	if status != 599 || string(body) != "handled by handle_errors: 502" {
		t.Fatalf("got %d %q %s; want handle_errors' 599 with the proxy's status 502", status, h.Get("Content-Type"), body)
	}
	if h.Get("X-Request-Id") == "" {
		t.Errorf("the request id the guard set is missing from handle_errors' answer: %v", h)
	}
	status, h, body = do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil)
	isProblem(t, "without a token", status, h, body, http.StatusUnauthorized)

	plain := startRepoGateway(t, down)
	status, h, body = do(t, http.MethodGet, plain.Base+"/api/fulfilment/v4/products", nil, gatewayHeaders(t, plain.Base)...)
	if p := isProblem(t, "without handle_errors", status, h, body, http.StatusBadGateway); p != nil && !strings.HasSuffix(p["type"].(string), "#upstream-unavailable") {
		t.Errorf("without handle_errors: problem %s, want type upstream-unavailable", body)
	}
}
