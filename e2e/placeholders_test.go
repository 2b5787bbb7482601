package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The placeholders fulfilment_version gives the handlers after it
// ({fulfilment.version}, {fulfilment.resource}, {fulfilment.upstream}),
// as a real Caddy resolves them wherever a Caddyfile can use them.

// upstreamRecorder is a loopback HTTP server standing for one WMS: it
// answers 200 "<name> <path>" and records the paths it received.
type upstreamRecorder struct {
	name string
	srv  *httptest.Server
	mu   sync.Mutex
	got  []string
}

func newUpstreamRecorder(t *testing.T, name string) *upstreamRecorder {
	t.Helper()
	u := &upstreamRecorder{name: name}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.got = append(u.got, r.URL.Path)
		u.mu.Unlock()
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// addr is the recorder's host:port.
func (u *upstreamRecorder) addr() string { return strings.TrimPrefix(u.srv.URL, "http://") }

// paths returns the paths received so far.
func (u *upstreamRecorder) paths() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

// acmeOnlyGlobals is the global options block of Caddyfiles that need only
// the demo partner's client and a data dir (here and in versioning_test.go).
const acmeOnlyGlobals = `{
	admin {$ADMIN}
	default_bind 127.0.0.1
	fulfilment {
		data_dir {$DATA}
		tokens {
			partner partner-acme {
				client acme-demo-client DEMO-ONLY-acme-secret-rMNA5Jesv37EyWG9Lx1nWAWS0NKeAS-VlNywJ555Zgk
			}
		}
	}
}
`

// Versions with their own upstreams behind `reverse_proxy
// {fulfilment.upstream}`, in a site that also has a `header` after the
// mapping, an access log with log_append fields, handle_errors routes,
// and a `map` that writes {fulfilment.upstream} from a request header
// (default: a decoy). Each version reaches its own upstream (long and
// short form, mapped and pass_unmapped resources), never the decoy,
// whatever the header says; the header, the error routes and the access
// log see the mapping's values; a request refused before the mapping logs
// them as unknown (null).
func TestVersionPlaceholdersInARealCaddy(t *testing.T) {
	t.Parallel()
	a, b, decoy := newUpstreamRecorder(t, "a"), newUpstreamRecorder(t, "b"), newUpstreamRecorder(t, "decoy")
	gw, down := freePort(t), freePort(t) // nothing listens on down
	accessLog := filepath.Join(t.TempDir(), "access.log")
	cf := acmeOnlyGlobals + `
http://:{$GW_PORT} {
	log {
		output file {$ACCESS_LOG}
		format json
	}
	log_append fulfilment_version {fulfilment.version}
	log_append fulfilment_resource {fulfilment.resource}
	log_append fulfilment_upstream {fulfilment.upstream}
	map {http.request.header.X-Warehouse} {fulfilment.upstream} {
		~^(.+)$ ${1}
		default {$DECOY}
	}
	route /api/auth/token {
		fulfilment_token
	}
	route {
		fulfilment_auth
		fulfilment_version {
			expose products
			pass_unmapped
			version v4 {
				upstream {$A}
			}
			version v3 {
				upstream_prefix /classic
				upstream {$B}
			}
			version v2 {
				upstream 127.0.0.1:{$DOWN_PORT}
			}
		}
		header X-Placeholders "{fulfilment.version} {fulfilment.resource} {fulfilment.upstream}"
		reverse_proxy {fulfilment.upstream}
	}
	handle_errors {
		respond "errors: {fulfilment.version} {fulfilment.resource} {fulfilment.upstream} {err.status_code}" 599
	}
}
`
	startGateway(t, cf, fmt.Sprintf("GW_PORT=%d", gw), fmt.Sprintf("DOWN_PORT=%d", down),
		"A="+a.addr(), "B="+b.addr(), "DECOY="+decoy.addr(), "ACCESS_LOG="+accessLog)
	base := fmt.Sprintf("http://127.0.0.1:%d", gw)
	waitHTTP(t, base+"/")
	auth := gatewayHeaders(t, base)

	for _, tc := range []struct {
		target, warehouse, body, header string
	}{
		{"/api/fulfilment/v4/products", "", "a /products", "v4 products " + a.addr()},
		{"/api/fulfilment/v4/products/7", decoy.addr(), "a /products/7", "v4 products " + a.addr()},
		{"/v4/products", decoy.addr(), "a /products", "v4 products " + a.addr()},
		{"/api/fulfilment/v3/products", decoy.addr(), "b /classic/products", "v3 products " + b.addr()},
		{"/api/fulfilment/v3/unlisted/9", decoy.addr(), "b /classic/unlisted/9", "v3 unlisted " + b.addr()},
	} {
		h := append([]string{"X-Warehouse", tc.warehouse}, auth...)
		status, hdr, body := do(t, http.MethodGet, base+tc.target, nil, h...)
		if status != http.StatusOK || string(body) != tc.body {
			t.Errorf("GET %s (X-Warehouse %q): %d %q; want 200 from the version's upstream: %q", tc.target, tc.warehouse, status, body, tc.body)
		}
		if got := hdr.Get("X-Placeholders"); got != tc.header {
			t.Errorf("GET %s: the header directive after the mapping wrote %q, want %q", tc.target, got, tc.header)
		}
	}
	if got := decoy.paths(); len(got) != 0 {
		t.Errorf("the map's upstream (a request header, or its default) was dialled instead of the version's: %q", got)
	}

	status, _, body := do(t, http.MethodGet, base+"/api/fulfilment/v2/products", nil, auth...)
	want := fmt.Sprintf("errors: v2 products 127.0.0.1:%d 502", down)
	if status != 599 || string(body) != want {
		t.Errorf("v2, its upstream down: %d %q; want handle_errors' 599 %q", status, body, want)
	}
	status, _, _ = do(t, http.MethodGet, base+"/api/fulfilment/v4/products?refused=401", nil)
	if status != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", status)
	}
	status, _, _ = do(t, http.MethodGet, base+"/api/fulfilment/v9/products?refused=404", nil, auth...)
	if status != http.StatusNotFound {
		t.Errorf("unknown version: %d, want 404", status)
	}

	logged := accessLogFields(t, accessLog, 8)
	for uri, want := range map[string][3]any{
		"/api/fulfilment/v4/products":             {"v4", "products", a.addr()},
		"/api/fulfilment/v3/unlisted/9":           {"v3", "unlisted", b.addr()},
		"/api/fulfilment/v2/products":             {"v2", "products", fmt.Sprintf("127.0.0.1:%d", down)},
		"/api/fulfilment/v4/products?refused=401": {nil, nil, decoy.addr()},
		"/api/fulfilment/v9/products?refused=404": {nil, nil, decoy.addr()},
	} {
		e, ok := logged[uri]
		if !ok {
			t.Errorf("no access log entry for %s", uri)
			continue
		}
		got := [3]any{e["fulfilment_version"], e["fulfilment_resource"], e["fulfilment_upstream"]}
		if got != want {
			t.Errorf("access log of %s: version, resource, upstream = %v, want %v (nil: unknown)", uri, got, want)
		}
	}
}

// accessLogFields reads the JSON access log at path until it has at
// least n entries, and returns them by request URI (the last of each).
func accessLogFields(t *testing.T, path string, n int) map[string]map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, count := readAccessLog(path)
		if count >= n {
			return entries
		}
		if time.Now().After(deadline) {
			t.Fatalf("the access log %s has %d entries after 10s, want %d", path, count, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// accessLogEntry reads the JSON access log at path until it has an entry
// for uri, and returns the last one.
func accessLogEntry(t *testing.T, path, uri string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if e := func() map[string]any { entries, _ := readAccessLog(path); return entries[uri] }(); e != nil {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the access log %s has no entry for %s after 10s", path, uri)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readAccessLog returns the JSON access log's entries at path by request
// URI (the last of each), and how many it holds.
func readAccessLog(path string) (map[string]map[string]any, int) {
	entries := map[string]map[string]any{}
	count := 0
	f, err := os.Open(path)
	if err != nil {
		return entries, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		req, _ := e["request"].(map[string]any)
		if uri, _ := req["uri"].(string); uri != "" {
			entries[uri] = e
			count++
		}
	}
	return entries, count
}

// A site without any upstream in fulfilment_version: {fulfilment.upstream}
// stays unknown (respond leaves an unknown placeholder as it is), while
// the version and resource are known.
func TestVersionPlaceholderUpstreamUnknownWithoutOne(t *testing.T) {
	t.Parallel()
	gw := freePort(t)
	cf := acmeOnlyGlobals + `
http://:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route {
		fulfilment_auth
		fulfilment_version {
			expose products
			version v4 {
				upstream_prefix /wms
			}
		}
		respond "{fulfilment.version}|{fulfilment.resource}|{fulfilment.upstream}" 200
	}
}
`
	startGateway(t, cf, fmt.Sprintf("GW_PORT=%d", gw))
	base := fmt.Sprintf("http://127.0.0.1:%d", gw)
	waitHTTP(t, base+"/")
	status, _, body := do(t, http.MethodGet, base+"/v4/products", nil, gatewayHeaders(t, base)...)
	if want := "v4|products|{fulfilment.upstream}"; status != http.StatusOK || string(body) != want {
		t.Fatalf("%d %q, want 200 %q", status, body, want)
	}
}

// A fulfilment_version in handle_errors that sends v4 to a standby when
// the proxy cannot reach v4's own upstream: the request, mapped a second
// time there, reaches the standby, and the placeholders after it are the
// second mapping's.
func TestVersionPlaceholdersOfASecondMappingInHandleErrors(t *testing.T) {
	t.Parallel()
	standby := newUpstreamRecorder(t, "standby")
	gw, down := freePort(t), freePort(t)
	cf := acmeOnlyGlobals + `
http://:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route {
		fulfilment_auth
		fulfilment_version {
			expose products
			version v4 {
				upstream_prefix /primary
				upstream 127.0.0.1:{$DOWN_PORT}
			}
		}
		reverse_proxy {fulfilment.upstream}
	}
	handle_errors {
		route {
			fulfilment_version {
				map products items
				version v4 {
					upstream_prefix /standby
					upstream {$STANDBY}
				}
			}
			header X-Placeholders "{fulfilment.version} {fulfilment.resource} {fulfilment.upstream}"
			reverse_proxy {fulfilment.upstream}
		}
	}
}
`
	startGateway(t, cf, fmt.Sprintf("GW_PORT=%d", gw), fmt.Sprintf("DOWN_PORT=%d", down), "STANDBY="+standby.addr())
	base := fmt.Sprintf("http://127.0.0.1:%d", gw)
	waitHTTP(t, base+"/")
	status, h, body := do(t, http.MethodGet, base+"/api/fulfilment/v4/products/5", nil, gatewayHeaders(t, base)...)
	if status != http.StatusOK || string(body) != "standby /standby/items/5" {
		t.Fatalf("%d %q; want the standby's 200 for /standby/items/5", status, body)
	}
	if got, want := h.Get("X-Placeholders"), "v4 products "+standby.addr(); got != want {
		t.Errorf("placeholders after the second mapping: %q, want %q", got, want)
	}
}

// A reload that gives a version another upstream: the requests after it
// reach the new one.
func TestVersionPlaceholderUpstreamFollowsAReload(t *testing.T) {
	t.Parallel()
	a, b := newUpstreamRecorder(t, "a"), newUpstreamRecorder(t, "b")
	gw := freePort(t)
	site := func(upstream string) string {
		return acmeOnlyGlobals + `
http://:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route {
		fulfilment_auth
		fulfilment_version {
			expose products
			version v4 {
				upstream ` + upstream + `
			}
		}
		reverse_proxy {fulfilment.upstream}
	}
}
`
	}
	g := startGateway(t, site("{$A}"), fmt.Sprintf("GW_PORT=%d", gw), "A="+a.addr(), "B="+b.addr())
	base := fmt.Sprintf("http://127.0.0.1:%d", gw)
	waitHTTP(t, base+"/")
	auth := gatewayHeaders(t, base)
	if status, _, body := do(t, http.MethodGet, base+"/v4/products", nil, auth...); status != http.StatusOK || string(body) != "a /products" {
		t.Fatalf("before the reload: %d %q, want a's 200", status, body)
	}
	g.Reload(site("{$B}"))
	if status, _, body := do(t, http.MethodGet, base+"/v4/products", nil, auth...); status != http.StatusOK || string(body) != "b /products" {
		t.Fatalf("after the reload: %d %q, want b's 200", status, body)
	}
}
