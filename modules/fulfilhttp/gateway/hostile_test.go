package gateway

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// An attacker's view of fulfilment_gateway, measured against the site it
// replaces: the same jobs written as five directives of their own (the
// demo's site before the gateway). Both sites run in one real Caddy on
// loopback, each in front of a recording upstream of its own, and get the
// same raw requests; whatever the old site refused the gateway must
// refuse, and whatever it forwarded the gateway must forward as the
// upstream saw it from the old site.

// hostileVersion is the mapping of both sites: v4 serves POST too, so that
// request bodies and trailers go on to the upstream.
const hostileVersion = `map products items
expose shipments
version v4 {
	upstream_prefix /wms
	methods GET HEAD POST
}
version v3 {
	upstream_prefix /wms/classic
}
`

// indent prefixes every line of s with n tabs.
func indent(s string, n int) string {
	tabs := strings.Repeat("\t", n)
	return tabs + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+tabs) + "\n"
}

// twoSitesCaddyfile has the fulfilment app (the test partner), a site on
// gwPort with the gateway and one on oldPort with the five directives,
// each proxying to its own upstream. Neither site has a host matcher:
// like the demo, each answers any Host.
func twoSitesCaddyfile(dir string, gwPort, oldPort int, gwUp, oldUp string) string {
	return appOptions(dir) + fmt.Sprintf(`
http://:%d {
	bind 127.0.0.1
	fulfilment_gateway {
		portal
		token
		auth
		subscriptions
		version {
%s		}
	}
	reverse_proxy %s
}

http://:%d {
	bind 127.0.0.1
	fulfilment_portal {
		prefix /portal
	}
	fulfilment_token {
		path /api/auth/token
	}
	fulfilment_auth
	fulfilment_subscriptions
	fulfilment_version {
%s	}
	reverse_proxy %s
}
`, gwPort, indent(hostileVersion, 3), gwUp,
		oldPort, indent(hostileVersion, 2), oldUp)
}

// answer is what a raw request got back: the status (0 when the server
// closed the connection without one) and the headers that say how it was
// refused.
type answer struct {
	status int
	header http.Header
}

// sendRaw writes the raw request req (a whole HTTP/1.1 message) to addr on
// a new connection and reads one answer (for method, which tells whether
// the answer has a body).
func sendRaw(t *testing.T, addr, method, req string) answer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		return answer{}
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatalf("%q: reading the answer: %v", req, err)
	}
	return answer{res.StatusCode, res.Header}
}

// refusalHeaders are the answer headers that say how a request was
// refused or redirected; both sites must agree on them.
var refusalHeaders = []string{"Content-Type", "Allow", "Www-Authenticate", "Location", "Deprecation"}

// describe renders an answer and what the upstream got from it for
// comparison: the request id differs per request, so it counts only as
// present or not.
func describe(a answer, seen []received) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d", a.status)
	for _, name := range refusalHeaders {
		if v := a.header.Values(name); len(v) > 0 {
			fmt.Fprintf(&b, "; %s: %q", name, v)
		}
	}
	for _, r := range seen {
		fmt.Fprintf(&b, "\n\tupstream: %s %s body %q", r.method, r.uri, r.body)
		for _, h := range []struct {
			kind string
			hdr  http.Header
		}{{"header", r.header}, {"trailer", r.trailer}} {
			for _, name := range slices.Sorted(maps.Keys(h.hdr)) {
				vals := h.hdr[name]
				if name == "X-Request-Id" {
					vals = []string{fmt.Sprintf("<%d ids>", len(vals))}
				}
				fmt.Fprintf(&b, "\n\t\t%s %s: %q", h.kind, name, vals)
			}
		}
	}
	return b.String()
}

// hostileTargets are request targets near every boundary of the gateway:
// the portal's prefix and the token path (encoded, with dot segments, a
// trailing slash, another case), the subscriptions API's, the mapped
// resources (encoded slashes, dot segments, %2e, ;params, non-ASCII,
// double encoding, empty segments), the WMS's own paths, "*" and an
// absolute-form target.
var hostileTargets = []string{
	"/api/fulfilment/v4/products",
	"/api/fulfilment/v4/products/",
	"/api/fulfilment/v4/products/A-1",
	"/api/fulfilment/v4/products/a%2Fb",
	"/api/fulfilment/v4/products/a%5Cb",
	"/api/fulfilment/v4/products/..",
	"/api/fulfilment/v4/products/%2e%2e/%2e%2e/changes",
	"/api/fulfilment/v4/products/.%2E",
	"/api/fulfilment/v4/products/./x",
	"/api/fulfilment/v4/products/..;x/changes",
	"/api/fulfilment/v4/products;x=1",
	"/api/fulfilment/v4/products/a;b=c",
	"/api/fulfilment/v4/pr%6Fducts",
	"/api/fulfilment/v4/products/caf%C3%A9",
	"/api/fulfilment/v4/products/caf\xc3\xa9",
	"/api/fulfilment/v4/products/%c0%ae%c0%ae",
	"/api/fulfilment/v4/products/a%252e%252e",
	"/api/fulfilment/v4/products/a%00",
	"/api/fulfilment/v4/products/a!b'(c)*",
	"/api/fulfilment//v4/products",
	"//api/fulfilment/v4/products",
	"/api/fulfilment/V4/products",
	"/api/fulfilment/v3/products/x",
	"/api/fulfilment/v5/products",
	"/v4/products",
	"/v3/products/x",
	"/V4/products",
	"/wms/items",
	"/wms/changes",
	"/portal",
	"/portal/",
	"/portalx",
	"/Portal/",
	"/portal/../api/fulfilment/v4/products",
	"/portal%2F..%2Fapi%2Ffulfilment%2Fv4%2Fproducts",
	"/%70ortal/",
	"/api/auth/token",
	"/api/auth/token/",
	"/api/auth/token%2F",
	"/api/auth/token/../../fulfilment/v4/products",
	"/api/auth/%74oken",
	"/API/auth/token",
	"/api/auth/token;x",
	"/api/fulfilment/v4/subscriptions",
	"/api/fulfilment/v4/subscriptions/",
	"/api/fulfilment/v4/subscriptions/x/y",
	"/api/fulfilment/v4/subscriptions/../products",
	"/api/fulfilment/v4/products/../subscriptions",
	"/api/fulfilment/v4/subscriptions%2F..%2Fproducts",
	"/api/fulfilment/v4/openapi.json",
	"/api/fulfilment/v4/Subscriptions",
	"/",
	"*",
	"http://gateway.test/api/fulfilment/v4/products",
	"http://gateway.test/portal/",
}

// hostileHeaders are what a caller adds besides its (valid) token: a
// forged identity and request id; Connection naming them (so that the
// proxy would drop the gateway's own) with an upgrade; method and path
// overrides; the identity under an underscore spelling.
const hostileHeaders = "X-Partner-Id: partner-globex\r\nX-Request-Id: forged\r\n" +
	"Connection: X-Partner-Id, x-request-id, Upgrade, keep-alive\r\nUpgrade: websocket\r\n" +
	"X-HTTP-Method-Override: DELETE\r\nX-Original-URL: /wms/changes\r\nX_Partner_Id: partner-globex\r\n"

// The gateway refuses what the five separate directives refused, answers
// as they answered, and forwards exactly what they forwarded, for every
// target above with the methods a partner, a browser or a scanner sends,
// with and without a token, and with hostile headers, bodies and trailers.
func TestGatewayAnswersAndForwardsAsTheSeparateDirectives(t *testing.T) {
	gwUp, oldUp := newRecorder(t), newRecorder(t)
	gwPort, oldPort := freePort(t), freePort(t)
	cfg, err := adapt(twoSitesCaddyfile(t.TempDir(), gwPort, oldPort, gwUp.addr(), oldUp.addr()))
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	gwAddr, oldAddr := fmt.Sprintf("127.0.0.1:%d", gwPort), fmt.Sprintf("127.0.0.1:%d", oldPort)
	tok := fulfilmentToken(t)
	bearer := "Authorization: Bearer " + tok + "\r\n"

	type variant struct {
		name, headers, body string
		methods             []string
	}
	variants := []variant{
		{"without a token", "", "", []string{"GET", "HEAD", "OPTIONS", "POST"}},
		{"with a token", bearer, "", []string{"GET", "HEAD", "OPTIONS", "POST", "DELETE", "TRACE", "PUT"}},
		{"with hostile headers", bearer + hostileHeaders, "", []string{"GET", "POST"}},
		{"with content on a GET", bearer + "Content-Length: 5\r\n", "hello", []string{"GET"}},
		{"with a chunked body and an identity trailer", bearer + "Transfer-Encoding: chunked\r\nTrailer: X-Partner-Id\r\n",
			"5\r\nhello\r\n0\r\nX-Partner-Id: partner-globex\r\n\r\n", []string{"POST"}},
		{"with two Authorization headers", bearer + "Authorization: Bearer x\r\n", "", []string{"GET"}},
	}
	forwarded := 0
	for _, v := range variants {
		for _, method := range v.methods {
			for _, target := range hostileTargets {
				req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: gateway.test\r\n%s", method, target, v.headers)
				if v.body != "" && !strings.Contains(v.headers, "Content-Length") && !strings.Contains(v.headers, "chunked") {
					req += fmt.Sprintf("Content-Length: %d\r\n", len(v.body))
				}
				req += "\r\n" + v.body
				gotA := sendRaw(t, gwAddr, method, req)
				gotSeen := gwUp.take()
				wantA := sendRaw(t, oldAddr, method, req)
				wantSeen := oldUp.take()
				got, want := describe(gotA, gotSeen), describe(wantA, wantSeen)
				if got != want {
					t.Errorf("%s %q %s:\ngateway:    %s\nseparately: %s", method, target, v.name, got, want)
				}
				for _, r := range gotSeen {
					forwarded++
					if ids := r.header.Values("X-Partner-Id"); len(ids) != 1 || ids[0] != "partner-acme" ||
						r.header.Get("Authorization") != "" || r.header.Get("Upgrade") != "" || len(r.trailer) != 0 {
						t.Errorf("%s %q %s: the upstream got %s with identity %q, Authorization %q, Upgrade %q, trailers %v; want the verified partner only",
							method, target, v.name, r.uri, ids, r.header.Get("Authorization"), r.header.Get("Upgrade"), r.trailer)
					}
				}
			}
		}
	}
	t.Logf("%d requests forwarded", forwarded)
	if forwarded == 0 {
		t.Fatal("the gateway forwarded none of the requests: the comparison saw no forwarded request")
	}
}
