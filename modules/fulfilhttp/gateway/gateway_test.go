package gateway

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

const allJobs = "\t\tportal\n\t\ttoken\n\t\tauth\n\t\tsubscriptions\n" + versionBlock

// Every job answers its own requests, in the gateway's order, through a
// real Caddy server: the portal and the token endpoint without a token,
// the guard every other request without one, the subscriptions API and
// the version mapping after it; only mapped resources reach the upstream.
func TestGatewayRunsEachJobInItsOrder(t *testing.T) {
	base, up := startGateway(t, allJobs)

	res, _ := do(t, "GET", base+"/portal", "")
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/portal/" {
		t.Errorf("GET /portal: %d to %q, want the portal's 308 to /portal/", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = do(t, "GET", base+"/portal/", "")
	if res.Header.Get("Content-Security-Policy") == "" || res.StatusCode >= 400 {
		t.Errorf("GET /portal/: %d without the portal's headers, want a portal page", res.StatusCode)
	}

	tok := token(t, base) // the token endpoint, by a real OAuth 2.0 client

	for _, path := range []string{"/api/fulfilment/v4/products", "/portalx", "/api/auth/token/", "/api/fulfilment/v4/subscriptions", "/"} {
		res, body := do(t, "GET", base+path, "")
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("Content-Type"), "problem+json") ||
			res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without a token: %d %q %s, want the guard's 401 problem", path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}

	res, body := do(t, "GET", base+"/api/fulfilment/v4/subscriptions", tok)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "[") {
		t.Errorf("GET subscriptions: %d %s, want the subscriptions API's list", res.StatusCode, body)
	}
	res, body = do(t, "GET", base+"/api/fulfilment/v4/nothing", tok)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "not-found") {
		t.Errorf("GET an unmapped resource: %d %s, want the version mapping's 404 problem", res.StatusCode, body)
	}
	if seen := up.take(); len(seen) != 0 {
		t.Fatalf("the upstream got %s before any mapped request", uris(seen))
	}

	res, body = do(t, "GET", base+"/api/fulfilment/v4/products", tok)
	if res.StatusCode != http.StatusOK || body != `{"items":[]}` {
		t.Fatalf("GET products: %d %s, want the upstream's answer", res.StatusCode, body)
	}
	seen := up.take()
	if len(seen) != 1 {
		t.Fatalf("the upstream got %d requests, want 1", len(seen))
	}
	got := seen[0]
	if got.uri != "/wms/items" || got.header.Get("X-Partner-Id") != "partner-acme" ||
		got.header.Get("Authorization") != "" || got.header.Get("X-Request-Id") == "" ||
		got.header.Get("X-Request-Id") != res.Header.Get("X-Request-Id") {
		t.Errorf("upstream got %s with partner %q, Authorization %q, request id %q (answer's %q); want /wms/items, partner-acme, none, the answer's id",
			got.uri, got.header.Get("X-Partner-Id"), got.header.Get("Authorization"),
			got.header.Get("X-Request-Id"), res.Header.Get("X-Request-Id"))
	}
}

// What a caller adds to a valid request never reaches the upstream in
// place of the gateway's: a forged identity or request id, a Connection
// header naming them (which would have the proxy remove them), an upgrade,
// a method override; an escaped path keeps its escaping.
func TestGatewayForwardsOnlyWhatItVerified(t *testing.T) {
	base, up := startGateway(t, allJobs)
	tok := token(t, base)

	res, _ := do(t, "GET", base+"/api/fulfilment/v4/products", tok,
		"X-Partner-Id", "partner-globex", "X-Request-Id", "forged",
		"Connection", "X-Partner-Id, X-Request-Id, Upgrade", "Upgrade", "h2c",
		"X-HTTP-Method-Override", "DELETE")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET products with hostile headers: %d", res.StatusCode)
	}
	seen := up.take()
	if len(seen) != 1 {
		t.Fatalf("the upstream got %d requests, want 1", len(seen))
	}
	h := seen[0].header
	if h.Values("X-Partner-Id")[0] != "partner-acme" || len(h.Values("X-Partner-Id")) != 1 {
		t.Errorf("upstream X-Partner-Id %q, want only partner-acme", h.Values("X-Partner-Id"))
	}
	if id := h.Get("X-Request-Id"); id == "forged" || id != res.Header.Get("X-Request-Id") {
		t.Errorf("upstream X-Request-Id %q, answer's %q: want the gateway's own", id, res.Header.Get("X-Request-Id"))
	}
	if h.Get("Upgrade") != "" || h.Get("X-Http-Method-Override") != "" {
		t.Errorf("upstream got Upgrade %q, X-HTTP-Method-Override %q: want neither", h.Get("Upgrade"), h.Get("X-Http-Method-Override"))
	}

	// %2C is an escape net/url's default encoding would not make (it
	// keeps ','): the upstream URL needs a RawPath to carry it as sent.
	for _, item := range []string{"a%20b%21", "a%2Cb%20c", "plain-1"} {
		res, _ = do(t, "GET", base+"/api/fulfilment/v4/products/"+item, tok)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET item %s: %d", item, res.StatusCode)
		}
		if seen := up.take(); len(seen) != 1 || seen[0].uri != "/wms/items/"+item {
			t.Errorf("upstream got %s, want one request for /wms/items/%s", uris(seen), item)
		}
	}
	res, body := do(t, "GET", base+"/api/fulfilment/v4/products/a%2Fb", tok)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "problem") && !strings.Contains(body, "invalid") {
		t.Errorf("GET with an encoded slash: %d %s, want a 400 problem", res.StatusCode, body)
	}
	if seen := up.take(); len(seen) != 0 {
		t.Errorf("the upstream got %s", uris(seen))
	}
}

// Without the optional jobs, their paths are the guard's and the version
// mapping's like any other.
func TestGatewayWithoutOptionalJobs(t *testing.T) {
	base, up := startGateway(t, "\t\tauth\n"+versionBlock)
	for _, path := range []string{"/portal/", DefaultTokenPath} {
		res, _ := do(t, "POST", base+path, "")
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s: %d, want the guard's 401 (no portal, no token endpoint)", path, res.StatusCode)
		}
	}
	tok := fulfilmentToken(t)
	res, _ := do(t, "GET", base+"/api/fulfilment/v4/subscriptions", tok)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET subscriptions without the subscriptions job: %d, want the version mapping's 404", res.StatusCode)
	}
	if seen := up.take(); len(seen) != 0 {
		t.Errorf("the upstream got %s", uris(seen))
	}
}

// The next handler the gateway gives the jobs that answer their own paths
// refuses: a job that passed a request on would not reach the proxy.
func TestNotPassedOnRefuses(t *testing.T) {
	err := notPassedOn.ServeHTTP(nil, nil)
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) || he.StatusCode != http.StatusInternalServerError {
		t.Fatalf("notPassedOn returned %v, want a 500 handler error", err)
	}
}
