package e2e

// An attacker's view of the gateway: every test runs the real binary with the
// repository's demo Caddyfile on loopback, states the attack, asserts the
// documented refusal, and then that nothing leaked (the WMS simulator's
// request log) and nothing broke (a normal call still works, no panic in the
// gateway's logs). This file holds the shared helpers and partner isolation;
// hostile_*_test.go hold the token endpoint, the Bearer guard, subscriptions
// and paths.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The demo Caddyfile's second partner (non-consolidation).
const (
	globexPartner      = "partner-globex"
	globexClientID     = "globex-demo-client"
	globexClientSecret = "DEMO-ONLY-globex-secret-4w1eIA478L377qc0j2QVEXs3zmP8NVzk1NhdiRVTfFc"
)

// basicAuth is the value of an Authorization Basic header for id:secret.
func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

// hostileToken fetches an access token for the client with Basic auth.
func hostileToken(t testing.TB, base, id, secret string) string {
	t.Helper()
	status, _, body := do(t, http.MethodPost, base+"/api/auth/token", nil, "Authorization", basicAuth(id, secret))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s: %d %s", id, status, body)
	}
	return tok.AccessToken
}

// stillHealthy asserts that the gateway answers a normal protected call with
// tok and that its logs show no panic or Go stack trace.
func (g *repoGateway) stillHealthy(t testing.TB, tok string) {
	t.Helper()
	status, _, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil, "Authorization", "Bearer "+tok)
	if status != http.StatusOK || !strings.Contains(string(body), `"items"`) {
		t.Errorf("a normal call after the attack: %d %s", status, body)
	}
	g.noPanic(t)
}

// noPanic asserts that the gateway's logs carry no panic or stack trace.
func (g *repoGateway) noPanic(t testing.TB) {
	t.Helper()
	logs := g.Logs.String()
	for _, bad := range []string{"panic", "goroutine ", "runtime error", "runtime/debug.Stack", ".go:"} {
		if strings.Contains(logs, bad) {
			t.Errorf("gateway logs contain %q:\n%s", bad, logs)
			return
		}
	}
}

// notInLogs asserts that none of secrets appears in the gateway's logs.
func (g *repoGateway) notInLogs(t testing.TB, secrets ...string) {
	t.Helper()
	logs := g.Logs.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("gateway logs contain the secret %.12q...", s)
		}
	}
}

// nothingProxied asserts that no request reached the simulator through the
// gateway since the log was last cleared.
func (g *repoGateway) nothingProxied(t testing.TB, attack string) {
	t.Helper()
	for _, r := range g.proxied(t) {
		t.Errorf("%s: reached the WMS as %s %s ? %s with headers %v", attack, r.Method, r.Path, r.RawQuery, r.Headers)
	}
}

// rawResponse is what rawHTTP read back.
type rawResponse struct {
	Status int
	Header http.Header
	Body   string
}

// rawHTTP writes req (a whole HTTP/1.1 request, CRLFs included) to hostport
// over a fresh TCP connection and reads one response. Status is 0 when the
// server closed the connection without answering.
func rawHTTP(t testing.TB, hostport, req string) rawResponse {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostport, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("writing %q: %v", firstLine(req), err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%q: no answer within 30s", firstLine(req))
		}
		return rawResponse{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{resp.StatusCode, resp.Header, string(b)}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}

// hostport strips the scheme from a base URL.
func hostport(base string) string { return strings.TrimPrefix(base, "http://") }

// isProblem asserts a problem+json answer with status.
func isProblem(t testing.TB, what string, status int, h http.Header, body []byte, want int) map[string]any {
	t.Helper()
	var p map[string]any
	if status != want || !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") || json.Unmarshal(body, &p) != nil {
		t.Errorf("%s: %d %q %s, want %d problem+json", what, status, h.Get("Content-Type"), body, want)
		return nil
	}
	if p["status"] != float64(want) {
		t.Errorf("%s: problem status %v, want %d", what, p["status"], want)
	}
	return p
}

// listItems lists v/products with tok and returns the items' partners and ids.
func listItems(t testing.TB, base, path, tok string, header ...string) (partners, ids []string) {
	t.Helper()
	status, _, body := do(t, http.MethodGet, base+path, nil, append([]string{"Authorization", "Bearer " + tok}, header...)...)
	var page struct {
		Items []struct{ ID, Partner string } `json:"items"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	for _, it := range page.Items {
		partners = append(partners, it.Partner)
		ids = append(ids, it.ID)
	}
	return partners, ids
}

// Partner B (globex) tries to read, delete and list partner A's (acme)
// subscription by its id: every attempt is a 404 like an unknown id, and A's
// subscription is still there afterwards.
func TestHostileSubscriptionIsolation(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	acme := hostileToken(t, g.Base, demoClientID, demoClientSecret)
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	subs := g.Base + "/api/fulfilment/v4/subscriptions"
	status, _, body := do(t, http.MethodPost, subs, strings.NewReader(`{"notificationUrl":"http://127.0.0.1:9/acme-hook","event":"shipment-shipped"}`),
		"Authorization", "Bearer "+acme, "Content-Type", "application/json")
	var sub struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &sub) != nil || sub.ID == "" {
		t.Fatalf("acme subscribes: %d %s", status, body)
	}
	b := []string{"Authorization", "Bearer " + globex}
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/" + sub.ID},
		{http.MethodHead, "/" + sub.ID},
		{http.MethodDelete, "/" + sub.ID},
		{http.MethodGet, "/" + sub.ID + "/"},
		{http.MethodDelete, "/" + sub.ID + "/"},
		{http.MethodGet, "/" + strings.ToUpper(sub.ID)},
		{http.MethodGet, "/" + sub.ID + "%00"},
		{http.MethodDelete, "/" + sub.ID + "?partner=" + demoPartner},
		{http.MethodGet, "/./" + sub.ID},
		{http.MethodGet, "/x/../" + sub.ID},
	} {
		// Spoofing the identity header must not help either.
		status, h, body := do(t, tc.method, subs+tc.path, nil, append(b, "X-Partner-Id", demoPartner)...)
		if status == http.StatusOK || status == http.StatusNoContent || status/100 == 5 ||
			(tc.method != http.MethodHead && strings.Contains(string(body), sub.ID)) {
			t.Errorf("globex %s %s: %d %s", tc.method, tc.path, status, body)
		}
		if tc.method != http.MethodHead && status == http.StatusNotFound {
			isProblem(t, "globex "+tc.method+" "+tc.path, status, h, body, http.StatusNotFound)
		}
	}
	// A DELETE on the collection must not wipe anybody's subscriptions.
	if status, h, _ := do(t, http.MethodDelete, subs, nil, b...); status != http.StatusMethodNotAllowed || !strings.Contains(h.Get("Allow"), "POST") {
		t.Errorf("DELETE on the collection: %d Allow %q, want 405", status, h.Get("Allow"))
	}
	status, _, body = do(t, http.MethodGet, subs, nil, b...)
	if status != http.StatusOK || strings.Contains(string(body), sub.ID) || strings.Contains(string(body), "acme-hook") {
		t.Errorf("globex lists: %d %s", status, body)
	}
	// The same url and event from globex is globex's own subscription.
	status, _, body = do(t, http.MethodPost, subs, strings.NewReader(`{"notificationUrl":"http://127.0.0.1:9/acme-hook","event":"shipment-shipped"}`),
		append(b, "Content-Type", "application/json")...)
	if status != http.StatusCreated || strings.Contains(string(body), sub.ID) {
		t.Errorf("globex posts acme's url and event: %d %s, want 201 with a new id", status, body)
	}
	status, _, body = do(t, http.MethodGet, subs+"/"+sub.ID, nil, "Authorization", "Bearer "+acme)
	if status != http.StatusOK || !strings.Contains(string(body), sub.ID) {
		t.Errorf("acme's subscription after the attack: %d %s", status, body)
	}
	g.stillHealthy(t, acme)
}

// Partner B (globex) tries to see partner A's (acme) WMS records through the
// gateway: by id on v4, v3 and the short labels, and by spoofing the identity
// header (canonical, lower-case, twice, with underscores, in a trailer). The
// WMS must only ever receive globex's identity and never Authorization.
func TestHostileWMSIsolation(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	acme := hostileToken(t, g.Base, demoClientID, demoClientSecret)
	_, acmeIDs := listItems(t, g.Base, "/api/fulfilment/v4/products", acme)
	if len(acmeIDs) != 3 {
		t.Fatalf("acme sees %d items, want the demo's 3", len(acmeIDs))
	}
	g.clearLog(t)
	for _, path := range []string{"/api/fulfilment/v4/products", "/api/fulfilment/v3/products", "/v4/products", "/v3/products"} {
		for _, spoof := range [][]string{nil, {"X-Partner-Id", demoPartner}, {"X-Partner-Id", ""}} {
			partners, _ := listItems(t, g.Base, path+"?page_size=500", globex, spoof...)
			if len(partners) != 2 || partners[0] != globexPartner || partners[1] != globexPartner {
				t.Errorf("globex lists %s (spoof %q): partners %q, want globex's two items", path, spoof, partners)
			}
		}
		for _, id := range acmeIDs {
			status, _, body := do(t, http.MethodGet, g.Base+path+"/"+id, nil, "Authorization", "Bearer "+globex, "X-Partner-Id", demoPartner)
			if status != http.StatusNotFound || strings.Contains(string(body), demoPartner) {
				t.Errorf("globex GET %s/%s: %d %s", path, id, status, body)
			}
		}
	}
	// Spellings of the identity header only a raw request can send.
	host := hostport(g.Base)
	for _, extra := range []string{
		"x-partner-id: " + demoPartner + "\r\n",
		"X-PARTNER-ID: " + demoPartner + "\r\n",
		"X-Partner-Id: " + demoPartner + "\r\nX-Partner-Id: " + demoPartner + "\r\n",
		"X-Partner-Id: " + demoPartner + ", " + globexPartner + "\r\n",
		"X_Partner_Id: " + demoPartner + "\r\n",
	} {
		req := "GET /api/fulfilment/v4/products/" + acmeIDs[0] + " HTTP/1.1\r\nHost: " + host +
			"\r\nAuthorization: Bearer " + globex + "\r\n" + extra + "Connection: close\r\n\r\n"
		if r := rawHTTP(t, host, req); r.Status != http.StatusNotFound || strings.Contains(r.Body, demoPartner) {
			t.Errorf("globex with %q: %d %s", extra, r.Status, r.Body)
		}
	}
	// The identity header in a trailer of a chunked body.
	req := "GET /api/fulfilment/v4/products/" + acmeIDs[0] + " HTTP/1.1\r\nHost: " + host +
		"\r\nAuthorization: Bearer " + globex + "\r\nTrailer: X-Partner-Id\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
		"0\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n"
	if r := rawHTTP(t, host, req); r.Status == http.StatusOK || strings.Contains(r.Body, demoPartner) {
		t.Errorf("globex with a trailer: %d %s", r.Status, r.Body)
	}
	got := g.proxied(t)
	if len(got) == 0 {
		t.Fatal("the simulator logged no proxied request; the log is not being watched")
	}
	for _, r := range got {
		var ids []string
		for name, v := range r.Headers {
			if n := strings.ReplaceAll(strings.ToLower(name), "_", "-"); n == "x-partner-id" {
				ids = append(ids, fmt.Sprintf("%s=%q", name, v))
			}
		}
		if len(ids) != 1 || ids[0] != fmt.Sprintf("X-Partner-Id=%q", []string{globexPartner}) {
			t.Errorf("%s %s reached the WMS with identity headers %v, want only X-Partner-Id [%s]", r.Method, r.Path, ids, globexPartner)
		}
		if len(r.Headers["Authorization"]) != 0 {
			t.Errorf("%s %s reached the WMS with Authorization", r.Method, r.Path)
		}
	}
	g.stillHealthy(t, globex)
}

// logged returns every request the simulator received since its log was
// last cleared, whether or not it carries a request id.
func (g *repoGateway) logged(t testing.TB) []wmsRecord {
	t.Helper()
	status, _, body := do(t, http.MethodGet, g.WMS+"/wms/_debug/requests", nil)
	var all []wmsRecord
	if status != http.StatusOK || json.Unmarshal(body, &all) != nil {
		t.Fatalf("simulator request log: %d %s", status, body)
	}
	// The demo's feed reader polls the simulator's change feed on its own
	// schedule; those polls are the gateway's, not a partner's requests.
	partners := all[:0]
	for _, r := range all {
		if r.Path != "/wms/changes" {
			partners = append(partners, r)
		}
	}
	return partners
}

// Partner B (globex) names the headers the guard sets in Connection, in
// every spelling, so that the proxy would remove them as hop-by-hop headers
// (RFC 9110 §7.6.1) after the guard set them: without X-Partner-Id the WMS
// answers every partner's records. Every request must still answer only
// globex's records, and reach the WMS with globex's identity and one
// request id.
func TestHostileConnectionHeaderCannotRemoveIdentity(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	acme := hostileToken(t, g.Base, demoClientID, demoClientSecret)
	_, acmeIDs := listItems(t, g.Base, "/api/fulfilment/v4/products", acme)
	if len(acmeIDs) == 0 {
		t.Fatal("acme sees no items; the demo seeds three")
	}
	host := hostport(g.Base)
	spellings := []string{
		"Connection: X-Partner-Id\r\n",
		"Connection: x-partner-id\r\n",
		"Connection: X-PARTNER-ID\r\n",
		"connection: x-PaRtNeR-iD\r\n",
		"Connection: keep-alive, X-Partner-Id\r\n",
		"Connection: X-Partner-Id, X-Request-Id\r\n",
		"Connection: \t X-Partner-Id \t, close\r\n",
		"Connection: ,,X-Partner-Id,,\r\n",
		"Connection: keep-alive\r\nConnection: X-Partner-Id\r\n",
		"Connection: X-Partner-Id\r\nConnection: X-Partner-Id\r\n",
		"Connection: Connection, X-Partner-Id\r\n",
		"Connection: X-Partner-Id\r\nX-Partner-Id: " + demoPartner + "\r\n",
		"Connection: X-Request-Id\r\n",
		"Connection: x-request-id, keep-alive\r\n",
		"Connection: Upgrade, X-Partner-Id\r\nUpgrade: websocket\r\n",
		"Proxy-Connection: X-Partner-Id\r\n",
		"Connection: close, X-Partner-Id\r\nProxy-Connection: X-Request-Id\r\n",
	}
	for _, path := range []string{"/api/fulfilment/v4/products", "/api/fulfilment/v3/products", "/v4/products", "/v3/products"} {
		g.clearLog(t) // the simulator keeps the newest 100 requests
		sent := 0
		for _, spelling := range spellings {
			req := "GET " + path + "?page_size=500 HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + globex + "\r\n" + spelling + "\r\n"
			r := rawHTTP(t, host, req)
			sent++
			var page struct {
				Items []struct{ Partner string } `json:"items"`
			}
			if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &page) != nil {
				t.Errorf("globex lists %s with %q: %d %s, want 200 and globex's items", path, spelling, r.Status, r.Body)
				continue
			}
			for _, it := range page.Items {
				if it.Partner != globexPartner {
					t.Errorf("globex lists %s with %q: sees an item of %q", path, spelling, it.Partner)
					break
				}
			}
			req = "GET " + path + "/" + acmeIDs[0] + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + globex + "\r\n" + spelling + "\r\n"
			r = rawHTTP(t, host, req)
			sent++
			if r.Status != http.StatusNotFound || strings.Contains(r.Body, demoPartner) {
				t.Errorf("globex reads acme's %s/%s with %q: %d %s, want 404", path, acmeIDs[0], spelling, r.Status, r.Body)
			}
		}
		// HEAD, with Go's client (which sends Connection as given).
		status, _, _ := do(t, http.MethodHead, g.Base+path+"/"+acmeIDs[0], nil, "Authorization", "Bearer "+globex, "Connection", "X-Partner-Id")
		sent++
		if status != http.StatusNotFound {
			t.Errorf("globex HEAD acme's %s/%s naming X-Partner-Id in Connection: %d, want 404", path, acmeIDs[0], status)
		}
		got := g.logged(t)
		if len(got) != sent {
			t.Errorf("%s: the WMS received %d requests, want the %d sent", path, len(got), sent)
		}
		for _, r := range got {
			if id := r.Headers["X-Partner-Id"]; len(id) != 1 || id[0] != globexPartner {
				t.Errorf("%s %s reached the WMS with X-Partner-Id %q, want [%s]", r.Method, r.Path, id, globexPartner)
			}
			if rid := r.Headers["X-Request-Id"]; len(rid) != 1 || len(rid[0]) != 36 {
				t.Errorf("%s %s reached the WMS with X-Request-Id %q, want one request id", r.Method, r.Path, rid)
			}
		}
	}
	g.stillHealthy(t, globex)
}
