package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoGateway is the repository's demo Caddyfile running on free loopback
// ports: the gateway site at Base, the WMS simulator at WMS.
type repoGateway struct {
	*gateway
	Base, WMS string
	DataDir   string // the fulfilment app's Badger dir
}

// demoReceiverPorts are the ports the demo Caddyfile lets webhooks reach on
// 127.0.0.1 in the tests: 9 (nothing listens there: a target that refuses
// connections) and the kernels' ephemeral ranges, where the tests'
// receivers (httptest servers) listen. The gateways' own ports (freePort)
// are below them.
const demoReceiverPorts = "9 32768-65535"

// startRepoGateway runs caddyfile (normally repoCaddyfile(t)) with the demo's
// environment variables pointing at free ports and a fresh data dir.
func startRepoGateway(t testing.TB, caddyfile string) *repoGateway {
	t.Helper()
	g := newRepoGateway(t, caddyfile)
	g.run(t)
	return g
}

// newRepoGateway prepares startRepoGateway's process without starting it,
// so that a test can put something into DataDir first; run starts it.
func newRepoGateway(t testing.TB, caddyfile string) *repoGateway {
	t.Helper()
	dir := t.TempDir()
	port, wms := freePort(t), freePort(t)
	g := &gateway{t: t, Dir: dir, Admin: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Logs: &syncBuffer{}}
	g.Env = []string{
		"FULFILGATE_ADMIN=" + g.Admin,
		"FULFILGATE_BIND=127.0.0.1",
		fmt.Sprintf("FULFILGATE_PORT=%d", port),
		fmt.Sprintf("WMS_PORT=%d", wms),
		"FULFILGATE_DATA=" + filepath.Join(dir, "data"),
		"FULFILGATE_RECEIVER_PORTS=" + demoReceiverPorts,
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg-data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg-config"),
	}
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	return &repoGateway{gateway: g, DataDir: filepath.Join(dir, "data"),
		Base: fmt.Sprintf("http://127.0.0.1:%d", port), WMS: fmt.Sprintf("http://127.0.0.1:%d", wms)}
}

// run starts the process and waits until both sites answer.
func (g *repoGateway) run(t testing.TB) {
	t.Helper()
	g.start()
	t.Cleanup(g.Stop)
	waitHTTP(t, g.WMS+"/wms")
	waitHTTP(t, g.Base+"/")
}

// The demo Caddyfile's partner whose token the versioning tests use.
const (
	demoPartner      = "partner-acme"
	demoClientID     = "acme-demo-client"
	demoClientSecret = "DEMO-ONLY-acme-secret-rMNA5Jesv37EyWG9Lx1nWAWS0NKeAS-VlNywJ555Zgk"
)

// gatewayTokens caches one access token per gateway base URL.
var gatewayTokens sync.Map

// gatewayHeaders are the headers every request to the gateway's fulfilment
// interface carries: a Bearer token of the demo partner, fetched once per
// gateway from base+"/api/auth/token". A gateway whose Caddyfile has no
// token endpoint (404) gets no Authorization header.
func gatewayHeaders(t testing.TB, base string) []string {
	t.Helper()
	if tok, ok := gatewayTokens.Load(base); ok {
		return tok.([]string)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(demoClientID), url.QueryEscape(demoClientSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var h []string
	switch resp.StatusCode {
	case http.StatusNotFound:
		h = []string{}
	case http.StatusOK:
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
			t.Fatalf("token response: %s", body)
		}
		h = []string{"Authorization", "Bearer " + tok.AccessToken}
	default:
		t.Fatalf("token request: %d %s", resp.StatusCode, body)
	}
	gatewayTokens.Store(base, h)
	return h
}

// gatewayGet GETs target from the gateway with gatewayHeaders plus header
// (name, value pairs).
func gatewayGet(t testing.TB, target string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	base := target
	if i := strings.Index(target[len("http://"):], "/"); i >= 0 {
		base = target[:len("http://")+i]
	}
	return do(t, http.MethodGet, target, nil, append(append([]string{}, gatewayHeaders(t, base)...), header...)...)
}

// rawGet sends "GET <target> HTTP/1.1" exactly as given (no client-side
// parsing or cleaning) to base's host, with gatewayHeaders, and returns the
// status code.
func rawGet(t testing.TB, base, target string) int {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", target, host)
	h := gatewayHeaders(t, base)
	for i := 0; i+1 < len(h); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", h[i], h[i+1])
	}
	b.WriteString("\r\n")
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %q: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// wmsRecord is one request the simulator received.
type wmsRecord struct {
	Method   string              `json:"method"`
	Path     string              `json:"path"`
	RawQuery string              `json:"raw_query"`
	Headers  map[string][]string `json:"headers"`
}

// proxied returns the requests the simulator received through the gateway
// (they carry the X-Request-Id the demo's reverse_proxy sets), oldest first.
func (g *repoGateway) proxied(t testing.TB) []wmsRecord {
	t.Helper()
	status, _, body := do(t, http.MethodGet, g.WMS+"/wms/_debug/requests", nil)
	var all []wmsRecord
	if status != http.StatusOK || json.Unmarshal(body, &all) != nil {
		t.Fatalf("simulator request log: %d %s", status, body)
	}
	var out []wmsRecord
	for _, r := range all {
		if len(r.Headers["X-Request-Id"]) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (g *repoGateway) clearLog(t testing.TB) {
	t.Helper()
	if status, _, body := do(t, http.MethodDelete, g.WMS+"/wms/_debug/requests", nil); status/100 != 2 {
		t.Fatalf("clearing the simulator log: %d %s", status, body)
	}
}

// Both versions and the short labels reach the simulator on the mapped
// paths, with the query string and the caller's headers unchanged.
func TestVersioningMapsOntoUpstreamPaths(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	for _, tc := range []struct{ public, path, query string }{
		{"/api/fulfilment/v4/products?page=1&page_size=2", "/wms/items", "page=1&page_size=2"},
		{"/api/fulfilment/v4/outbounds", "/wms/outbound-orders", ""},
		{"/api/fulfilment/v4/inbounds?page_size=1", "/wms/inbound-orders", "page_size=1"},
		{"/api/fulfilment/v4/adjustments", "/wms/stock-adjustments", ""},
		{"/api/fulfilment/v4/shipments", "/wms/shipments", ""},
		{"/api/fulfilment/v4/receipts", "/wms/receipts", ""},
		{"/api/fulfilment/v4/labels", "/wms/labels", ""},
		{"/api/fulfilment/v3/products?page=1&page_size=1", "/wms/classic/items", "page=1&page_size=1"},
		{"/api/fulfilment/v3/outbounds", "/wms/classic/outbound-orders", ""},
		{"/v4/products?q=a%20b&x=%2e%2e%2f", "/wms/items", "q=a%20b&x=%2e%2e%2f"},
		{"/v3/products", "/wms/classic/items", ""},
	} {
		g.clearLog(t)
		status, _, body := gatewayGet(t, g.Base+tc.public, "X-Trace-Test", "trace-"+tc.path)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d %s", tc.public, status, body)
			continue
		}
		got := g.proxied(t)
		if len(got) != 1 {
			t.Errorf("GET %s: simulator received %d proxied requests: %+v", tc.public, len(got), got)
			continue
		}
		r := got[0]
		if r.Method != http.MethodGet || r.Path != tc.path || r.RawQuery != tc.query {
			t.Errorf("GET %s reached the simulator as %s %s ? %q, want %s ? %q", tc.public, r.Method, r.Path, r.RawQuery, tc.path, tc.query)
		}
		if v := r.Headers["X-Trace-Test"]; !reflect.DeepEqual(v, []string{"trace-" + tc.path}) {
			t.Errorf("GET %s: caller's header arrived as %q", tc.public, v)
		}
		if v := r.Headers["Authorization"]; len(v) != 0 {
			t.Errorf("GET %s: the simulator received Authorization %q", tc.public, v)
		}
	}

	// One record, three public spellings and the WMS's own path: same body.
	status, _, body := do(t, http.MethodGet, g.WMS+"/wms/items?page_size=1", nil, "X-Partner-Id", demoPartner)
	var list struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Items) != 1 {
		t.Fatalf("simulator items: %d %s", status, body)
	}
	id := list.Items[0].ID
	_, _, direct := do(t, http.MethodGet, g.WMS+"/wms/items/"+id, nil, "X-Partner-Id", demoPartner)
	for _, public := range []string{"/api/fulfilment/v4/products/" + id, "/v4/products/" + id, "/api/fulfilment/v3/products/" + id} {
		status, _, body := gatewayGet(t, g.Base+public)
		if status != http.StatusOK || string(body) != string(direct) {
			t.Errorf("GET %s: %d %s; the WMS answers %s", public, status, body, direct)
		}
	}
}

// A deprecated version (v3 in the demo) carries Deprecation, Sunset and a
// successor-version Link; the current one carries none.
func TestVersioningDeprecationHeaders(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	for _, tc := range []struct{ public, link string }{
		{"/api/fulfilment/v3/products", `</api/fulfilment/v4/products>; rel="successor-version"`},
		{"/v3/products", `</v4/products>; rel="successor-version"`},
		{"/api/fulfilment/v3/outbounds?page=1", `</api/fulfilment/v4/outbounds>; rel="successor-version"`},
	} {
		status, h, body := gatewayGet(t, g.Base+tc.public)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", tc.public, status, body)
		}
		if got := h.Get("Deprecation"); got != "@1780272000" { // 2026-06-01T00:00:00Z
			t.Errorf("GET %s: Deprecation %q", tc.public, got)
		}
		if got := h.Get("Sunset"); got != "Wed, 30 Jun 2027 00:00:00 GMT" {
			t.Errorf("GET %s: Sunset %q", tc.public, got)
		}
		if got := h.Values("Link"); !reflect.DeepEqual(got, []string{tc.link}) {
			t.Errorf("GET %s: Link %q, want %q", tc.public, got, tc.link)
		}
	}
	for _, public := range []string{"/api/fulfilment/v4/products", "/v4/products"} {
		status, h, _ := gatewayGet(t, g.Base+public)
		if status != http.StatusOK || h.Get("Deprecation") != "" || h.Get("Sunset") != "" || h.Get("Link") != "" {
			t.Errorf("GET %s: %d, current version carries deprecation headers %v", public, status, h)
		}
	}
}

// An unknown version answers 404 problem+json naming the versions served,
// and never reaches the simulator.
func TestVersioningUnknownVersion(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	g.clearLog(t)
	for _, public := range []string{
		"/api/fulfilment/v2/products",
		"/api/fulfilment/v5/products/1",
		"/api/fulfilment/vX/shipments",
		"/api/fulfilment/v5",
		"/v5/products",
		"/v2/products/1",
	} {
		status, h, body := gatewayGet(t, g.Base+public)
		var p struct {
			Type     string   `json:"type"`
			Status   int      `json:"status"`
			Detail   string   `json:"detail"`
			Versions []string `json:"versions"`
		}
		if status != http.StatusNotFound || h.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil {
			t.Errorf("GET %s: %d %q %s", public, status, h.Get("Content-Type"), body)
			continue
		}
		if p.Status != 404 || !strings.HasSuffix(p.Type, "#unknown-version") ||
			!reflect.DeepEqual(p.Versions, []string{"v4", "v3"}) || !strings.Contains(p.Detail, "v4, v3") {
			t.Errorf("GET %s: problem %+v", public, p)
		}
	}
	if got := g.proxied(t); len(got) != 0 {
		t.Fatalf("unknown versions reached the simulator: %+v", got)
	}
}

// No spelling of a path reaches the simulator outside the mapped resources:
// each attempt is refused with 400 or 404, and the simulator's log shows no
// proxied request at all. A plain request afterwards does show up, so the
// log is being watched.
func TestVersioningTraversalNeverReachesUpstream(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	g.clearLog(t)
	wmsHost := strings.TrimPrefix(g.WMS, "http://")
	for _, target := range []string{
		"/api/fulfilment/v4/products/../../_debug/requests",
		"/api/fulfilment/v4/products/../../../wms/_control/outage",
		"/api/fulfilment/v4/../v3/products",
		"/api/fulfilment/v3/../../../wms/_debug/requests",
		"/api/fulfilment/v4/products/%2e%2e/%2e%2e/_debug/requests",
		"/api/fulfilment/v4/products/%2E%2E%2F%2E%2E%2F_control%2Foutage",
		"/api/fulfilment/v4/products/.%2e/.%2e/_debug/requests",
		"/api/fulfilment/v4/products/..%2f..%2f_debug%2frequests",
		`/api/fulfilment/v4/products/..\..\_debug\requests`,
		"/api/fulfilment/v4/products/%5c..%5c..%5c_debug",
		"/api/fulfilment/v4/products//..//_debug/requests",
		"/api/fulfilment/v4//products",
		"//api/fulfilment/v4/products",
		"/api/fulfilment/v4/products/..;/..;/_debug/requests",
		"/api/fulfilment/v4/products/%2e%2e%3b/%2e%2e%3b/_debug/requests",
		"/api/fulfilment/v4/products/%252e%252e/%252e%252e/_debug/requests",
		"/api/fulfilment/v4/products/%c0%ae%c0%ae/_debug/requests",
		"/api/fulfilment/v4/products/%00/../x",
		"/api/fulfilment/v4/products/a%0d%0aX-Injected:%201",
		"/api/fulfilment/v4/_debug/requests",
		"/api/fulfilment/v4/_control/outage",
		"/api/fulfilment/v4/%5fdebug/requests",
		"/v4/products/../../wms/_debug/requests",
		"/v4/products/%2e%2e/%2e%2e/wms/_debug/requests",
		"/v4/shipments/../products",
		"/wms/_debug/requests",
		"/wms/items",
		"http://" + wmsHost + "/wms/_debug/requests",
	} {
		status := rawGet(t, g.Base, target)
		if status != http.StatusBadRequest && status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 400 or 404", target, status)
		}
	}
	if got := g.proxied(t); len(got) != 0 {
		for _, r := range got {
			t.Errorf("reached the simulator: %s %s ? %s", r.Method, r.Path, r.RawQuery)
		}
	}
	if status := rawGet(t, g.Base, "/api/fulfilment/v4/products/x%20y"); status != http.StatusNotFound {
		t.Fatalf("unknown item: %d, want the simulator's 404", status)
	}
	got := g.proxied(t)
	if len(got) != 1 || got[0].Path != "/wms/items/x y" {
		t.Fatalf("a plain request was not logged as expected: %+v", got)
	}
}

// With `reverse_proxy {fulfilment.upstream}`, each version goes to its own
// upstream: here two simulators (two warehouses) in the same process.
func TestVersioningPerVersionUpstream(t *testing.T) {
	t.Parallel()
	gw, a, b := freePort(t), freePort(t), freePort(t)
	const cf = acmeOnlyGlobals + `
http://:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route /api/fulfilment/* {
		fulfilment_auth
		fulfilment_version {
			map products items
			expose shipments
			version v4 {
				upstream_prefix /wms
				upstream 127.0.0.1:{$A_PORT}
			}
			version v3 {
				upstream_prefix /wms/classic
				upstream 127.0.0.1:{$B_PORT}
			}
		}
		reverse_proxy {fulfilment.upstream}
	}
	respond 404
}

http://:{$A_PORT} {
	wms_simulator a
}

http://:{$B_PORT} {
	wms_simulator b
}
`
	g := startGateway(t, cf, fmt.Sprintf("GW_PORT=%d", gw), fmt.Sprintf("A_PORT=%d", a), fmt.Sprintf("B_PORT=%d", b))
	base := fmt.Sprintf("http://127.0.0.1:%d", gw)
	simA := &repoGateway{gateway: g, Base: base, WMS: fmt.Sprintf("http://127.0.0.1:%d", a)}
	simB := &repoGateway{gateway: g, Base: base, WMS: fmt.Sprintf("http://127.0.0.1:%d", b)}
	waitHTTP(t, simA.WMS+"/wms")
	waitHTTP(t, simB.WMS+"/wms")
	waitHTTP(t, base+"/")
	simA.clearLog(t)
	simB.clearLog(t)
	for _, public := range []string{"/api/fulfilment/v4/products", "/api/fulfilment/v3/products", "/api/fulfilment/v4/shipments"} {
		if status, _, body := gatewayGet(t, base+public); status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", public, status, body)
		}
	}
	paths := func(recs []wmsRecord) []string {
		var p []string
		for _, r := range recs {
			p = append(p, r.Path)
		}
		return p
	}
	if got := paths(simA.proxied(t)); !reflect.DeepEqual(got, []string{"/wms/items", "/wms/shipments"}) {
		t.Errorf("v4 upstream received %q", got)
	}
	if got := paths(simB.proxied(t)); !reflect.DeepEqual(got, []string{"/wms/classic/items"}) {
		t.Errorf("v3 upstream received %q", got)
	}
}
