package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// wmsState counts the simulator's feed changes and outbounds (operator view,
// straight from the WMS port) so that a test can prove nothing was created.
func (g *repoGateway) wmsState(t testing.TB) string {
	t.Helper()
	_, _, changes := do(t, http.MethodGet, g.WMS+"/wms/changes?limit=1000", nil)
	_, _, obs := do(t, http.MethodGet, g.WMS+"/wms/outbound-orders", nil)
	var c struct{ Changes []any }
	var o struct{ Total int }
	_ = json.Unmarshal(changes, &c)
	_ = json.Unmarshal(obs, &o)
	b, _ := json.Marshal([]int{len(c.Changes), o.Total})
	return string(b)
}

// Path spellings that try to reach the simulator's control surface or debug
// log through the gateway, sent raw (path-as-is), with a valid token and a
// body that would create an outbound: none reaches them, none is a 2xx or
// 5xx, and the warehouse is unchanged.
func TestHostilePathsNeverReachWMSInternals(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	tok := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host, wmsHost := hostport(g.Base), hostport(g.WMS)
	before := g.wmsState(t)
	g.clearLog(t)
	body := `{"partner":"partner-acme","orderRef":"pwned"}`
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, target := range []string{
			"/api/fulfilment/v4/../../wms/_control/outbounds",
			"/api/fulfilment/v4/../../../wms/_control/outbounds",
			"/api/fulfilment/v4/%2e%2e/%2e%2e/wms/_control/outbounds",
			"/api/fulfilment/v4/%2E%2E%2F%2E%2E%2Fwms%2F_control%2Foutbounds",
			"/api/fulfilment/v4/products/../../_control/outbounds",
			"/api/fulfilment/v4/products/..%2f..%2f_control%2foutbounds",
			"/api/fulfilment/v4/products/..%252f..%252f_control%252foutbounds",
			"/api/fulfilment/v4/products/%2e%2e%5c%2e%2e%5c_control%5coutbounds",
			"/api/fulfilment/v4/products;/../../_control/outbounds",
			"/api/fulfilment/v4/products/.;/.;/_control/outbounds",
			"/api/fulfilment/v4/outbounds/../_control/outbounds",
			"/api/fulfilment/v4/_control/outbounds",
			"/api/fulfilment/v4/%5fcontrol/outbounds",
			"/api/fulfilment/v4/classic/../_control/outbounds",
			"/api/fulfilment/v4/_debug/echo/x",
			"/api/fulfilment/v4/products/../../_debug/requests",
			"/api/fulfilment/v3/../../wms/_control/outage",
			"/api/fulfilment/v3/../../../wms/_debug/requests",
			"/v4/products/../../wms/_control/outbounds",
			"/v4/products/..%2f..%2fwms%2f_control%2foutbounds",
			"/v4/..%2f_control/outbounds",
			"/wms/_control/outbounds",
			"/wms/_debug/requests",
			"http://" + wmsHost + "/wms/_control/outbounds",
			"http://" + wmsHost + "/api/fulfilment/v4/../../wms/_control/outbounds",
		} {
			req := method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + tok +
				"\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
			r := rawHTTP(t, host, req)
			if r.Status/100 == 2 || r.Status/100 == 5 || r.Status == 0 {
				t.Errorf("%s %s: %d %s", method, target, r.Status, r.Body)
			}
		}
	}
	for _, r := range g.proxied(t) {
		if strings.Contains(r.Path, "_control") || strings.Contains(r.Path, "_debug") || r.Method != http.MethodGet {
			t.Errorf("reached the WMS: %s %s", r.Method, r.Path)
		}
	}
	if after := g.wmsState(t); after != before {
		t.Errorf("the warehouse changed: [changes, outbounds] %s -> %s", before, after)
	}
	g.stillHealthy(t, tok)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Host header games and smuggling: a Host naming the WMS, the admin API or
// garbage still goes through the guard; conflicting framing (Content-Length
// with chunked) cannot smuggle a second request past it.
func TestHostileHostHeaderAndSmuggling(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	tok := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host, wmsHost := hostport(g.Base), hostport(g.WMS)
	g.clearLog(t)
	for _, h := range []string{wmsHost, g.Admin, "localhost", "evil.example", "127.0.0.1:1@" + wmsHost} {
		// Without a token: 401 whatever the Host says.
		r := rawHTTP(t, host, "GET /api/fulfilment/v4/products HTTP/1.1\r\nHost: "+h+"\r\nConnection: close\r\n\r\n")
		if r.Status != http.StatusUnauthorized && r.Status != http.StatusBadRequest {
			t.Errorf("Host %s without a token: %d %s", h, r.Status, r.Body)
		}
		// Paths of the WMS or the admin API: 401 without a token, 404 with
		// one (400 where the Host itself is refused).
		for _, p := range []string{"/wms/_debug/requests", "/config/", "/fulfilment/partners"} {
			r := rawHTTP(t, host, "GET "+p+" HTTP/1.1\r\nHost: "+h+"\r\nConnection: close\r\n\r\n")
			if r.Status != http.StatusUnauthorized && r.Status != http.StatusBadRequest {
				t.Errorf("Host %s GET %s without a token: %d %s", h, p, r.Status, r.Body)
			}
			r = rawHTTP(t, host, "GET "+p+" HTTP/1.1\r\nHost: "+h+"\r\nAuthorization: Bearer "+tok+"\r\nConnection: close\r\n\r\n")
			if r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest {
				t.Errorf("Host %s GET %s with a token: %d %s", h, p, r.Status, r.Body)
			}
		}
	}
	g.nothingProxied(t, "Host games")
	// CL.TE: the chunked body ends early and "smuggles" a request for acme's item
	// and the WMS control surface without a token.
	smuggled := "GET /wms/_control/outbounds HTTP/1.1\r\nHost: " + wmsHost + "\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n"
	chunked := "0\r\n\r\n" + smuggled
	for _, framing := range []string{
		"Content-Length: " + itoa(len(chunked)) + "\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
		"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
		"Transfer-Encoding: xchunked\r\n",
		"Content-Length: 4\r\nContent-Length: " + itoa(len(chunked)) + "\r\n",
	} {
		r := rawHTTP(t, host, "POST /api/fulfilment/v4/subscriptions HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+tok+
			"\r\nContent-Type: application/json\r\n"+framing+"\r\n"+chunked)
		// 501 is net/http refusing an unknown transfer coding (RFC 9112 §6.1).
		if r.Status/100 == 2 || (r.Status/100 == 5 && r.Status != http.StatusNotImplemented) || r.Status == 0 {
			t.Errorf("framing %q: %d %s", framing, r.Status, r.Body)
		}
	}
	for _, r := range g.proxied(t) {
		t.Errorf("smuggled to the WMS: %s %s %v", r.Method, r.Path, r.Headers)
	}
	// Forwarding headers sent by the partner are not trusted: the WMS sees the
	// real peer address.
	do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil, "Authorization", "Bearer "+tok,
		"X-Forwarded-For", "10.1.2.3", "X-Forwarded-Host", "admin.internal", "X-Forwarded-Proto", "https")
	got := g.proxied(t)
	if len(got) != 1 {
		t.Fatalf("want one proxied request, got %+v", got)
	}
	if xff := strings.Join(got[0].Headers["X-Forwarded-For"], ","); strings.Contains(xff, "10.1.2.3") || xff != "127.0.0.1" {
		t.Errorf("the WMS got X-Forwarded-For %q, want the peer 127.0.0.1 only", xff)
	}
	if xfh := strings.Join(got[0].Headers["X-Forwarded-Host"], ","); strings.Contains(xfh, "admin.internal") {
		t.Errorf("the WMS got X-Forwarded-Host %q", xfh)
	}
	g.stillHealthy(t, tok)
}

// The admin API (partners, keys, config) is not reachable on the gateway's
// port: without a token every such path is 401 (the guard comes first, so
// a caller without a token learns nothing about which paths exist), with
// one it is 404. The admin listener itself refuses a foreign Host (DNS
// rebinding).
func TestHostileAdminNotOnGatewayPort(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	tok := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/config/"},
		{http.MethodPost, "/load"},
		{http.MethodPost, "/stop"},
		{http.MethodGet, "/fulfilment/partners"},
		{http.MethodPost, "/fulfilment/partners"},
		{http.MethodGet, "/fulfilment/keys"},
		{http.MethodPost, "/fulfilment/keys/rotate"},
		{http.MethodGet, "/fulfilment/webhooks/dead"},
		{http.MethodGet, "/fulfilment/feeds"},
		{http.MethodGet, "/debug/pprof/"},
		{http.MethodGet, "/metrics"},
		{http.MethodGet, "/api/fulfilment/v4/../../config/"},
	} {
		for _, c := range []struct {
			auth []string
			want int
		}{{nil, http.StatusUnauthorized}, {[]string{"Authorization", "Bearer " + tok}, http.StatusNotFound}} {
			want := c.want
			if c.auth != nil && strings.Contains(tc.path, "/../") {
				want = http.StatusBadRequest // the version handler refuses dot segments
			}
			status, h, body := do(t, tc.method, g.Base+tc.path, strings.NewReader("{}"), append(c.auth, "Content-Type", "application/json")...)
			if status != want || !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") ||
				strings.Contains(string(body), "secret") || strings.Contains(string(body), "public_key") {
				t.Errorf("%s %s on the gateway port (token: %v): %d %q %s, want %d problem+json", tc.method, tc.path, c.auth != nil, status, h.Get("Content-Type"), body, want)
			}
		}
	}
	// The admin listener answers only its own Host (Caddy's origin check).
	r := rawHTTP(t, g.Admin, "GET /fulfilment/partners HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
	if r.Status != http.StatusForbidden || strings.Contains(r.Body, globexPartner) {
		t.Errorf("admin API with Host evil.example: %d %s, want 403", r.Status, r.Body)
	}
	if status, _, body := do(t, http.MethodGet, "http://"+g.Admin+"/fulfilment/partners", nil); status != http.StatusOK || !strings.Contains(string(body), globexPartner) {
		t.Errorf("admin API with its own Host: %d %s", status, body)
	}
	g.stillHealthy(t, tok)
}

// The version handler serves only mapped or exposed resources (default
// deny; pass_unmapped is off in the demo). The WMS's change feed,
// /wms/changes, is not partner-filtered: partner B must not read partner
// A's changes through /api/fulfilment/v4/changes.
func TestHostileChangeFeedNotExposedToPartners(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	status, _, body := do(t, http.MethodPost, g.WMS+"/wms/_control/outbounds",
		strings.NewReader(`{"partner":"partner-acme","orderRef":"ACME-SECRET-ORDER"}`), "Content-Type", "application/json")
	if status/100 != 2 {
		t.Fatalf("creating acme's outbound: %d %s", status, body)
	}
	var leaks []string
	for _, p := range []string{"/api/fulfilment/v4/changes", "/api/fulfilment/v3/changes", "/api/fulfilment/v4/changes?after=0&limit=1000", "/v4/changes"} {
		status, h, body := do(t, http.MethodGet, g.Base+p, nil, "Authorization", "Bearer "+globex)
		if strings.Contains(string(body), demoPartner) || strings.Contains(string(body), "OB-000001") {
			leaks = append(leaks, fmt.Sprintf("GET %s with globex's token -> %d %s", p, status, body))
			continue
		}
		if status != http.StatusNotFound {
			t.Errorf("globex GET %s: %d %s, want 404", p, status, body)
		} else if !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") && !strings.Contains(string(body), "WMS-404") {
			t.Errorf("globex GET %s: 404 with %q %s", p, h.Get("Content-Type"), body)
		}
	}
	g.stillHealthy(t, globex)
	if len(leaks) > 0 {
		t.Errorf("the demo Caddyfile exposes the WMS's unfiltered change feed to partners:\n%s", strings.Join(leaks, "\n"))
	}
}
