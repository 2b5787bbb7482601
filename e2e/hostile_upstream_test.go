package e2e

// What the WMS receives, byte for byte: a raw upstream on loopback stands in
// for the WMS (the demo Caddyfile's reverse_proxy pointed at it) and records
// every request as the gateway wrote it, trailers included. It also does
// what a WMS may do and the simulator does not: it accepts a protocol
// upgrade (101), after which a proxy would only copy bytes and every later
// request on the connection would carry whatever identity the caller wrote.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawUpstream is the recording stand-in for the WMS.
type rawUpstream struct {
	ln       net.Listener
	mu       sync.Mutex
	requests []string // each request's head as received, then its trailers
	tunneled []string // bytes received after a 101
}

func startRawUpstream(t testing.TB) *rawUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go u.serve(c)
		}
	}()
	return u
}

func (u *rawUpstream) serve(c net.Conn) {
	defer c.Close()
	var raw bytes.Buffer
	br := bufio.NewReader(io.TeeReader(c, &raw))
	for {
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		// The request's bytes: what the tee saw, less what bufio read
		// ahead; its head and its trailers (the body is the WMS's data).
		n := raw.Len() - br.Buffered()
		head, _, _ := strings.Cut(string(raw.Bytes()[:n]), "\r\n\r\n")
		for name, vals := range req.Trailer {
			for _, v := range vals {
				head += "\r\n" + name + ": " + v + " (trailer)"
			}
		}
		u.mu.Lock()
		u.requests = append(u.requests, head)
		u.mu.Unlock()
		raw.Next(n)
		if req.Header.Get("Upgrade") != "" {
			fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", req.Header.Get("Upgrade"))
			buf := make([]byte, 4096)
			for {
				n, err := br.Read(buf)
				if n > 0 {
					u.mu.Lock()
					u.tunneled = append(u.tunneled, string(buf[:n]))
					u.mu.Unlock()
					_, _ = c.Write([]byte("TUNNELED"))
				}
				if err != nil {
					return
				}
			}
		}
		body := `{"items":[]}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}

// take returns and forgets what the upstream recorded.
func (u *rawUpstream) take() (requests, tunneled []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	requests, tunneled = u.requests, u.tunneled
	u.requests, u.tunneled = nil, nil
	return requests, tunneled
}

// startGatewayOnRawUpstream runs the demo Caddyfile with its reverse_proxy
// pointed at a raw upstream; methods, when given, are the methods the
// version handler serves (the demo's default is GET and HEAD).
func startGatewayOnRawUpstream(t *testing.T, methods ...string) (*repoGateway, *rawUpstream) {
	t.Helper()
	u := startRawUpstream(t)
	cf := repoCaddyfile(t)
	if len(methods) > 0 {
		const block = "\t\tversion {"
		if !strings.Contains(cf, block) {
			t.Fatalf("the demo Caddyfile has no %q", block)
		}
		cf = strings.Replace(cf, block, block+"\n\t\tmethods "+strings.Join(methods, " "), 1)
	}
	const proxy = "reverse_proxy 127.0.0.1:{$WMS_PORT:8081}"
	if !strings.Contains(cf, proxy) {
		t.Fatalf("the demo Caddyfile has no %q", proxy)
	}
	return startRepoGateway(t, strings.Replace(cf, proxy, "reverse_proxy "+u.ln.Addr().String(), 1)), u
}

// identityLines returns the header and trailer lines of a raw request whose
// name a server could take for X-Partner-Id: any ASCII case, and "_" for
// "-" (CGI, WSGI and many frameworks map both to HTTP_X_PARTNER_ID).
func identityLines(raw string) []string {
	var out []string
	for line := range strings.SplitSeq(raw, "\r\n") {
		name, _, ok := strings.Cut(line, ":")
		if ok && strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-") == "x-partner-id" {
			out = append(out, line)
		}
	}
	return out
}

// Partner globex sends, with its own valid token, requests that try to put
// another identity in front of the WMS: in trailers (announced or not), as
// an obs-folded line, under an underscore spelling, or in a second request
// hidden in the body by Transfer-Encoding and Content-Length games. Every
// request the WMS receives must carry exactly one identity line, globex's,
// and the WMS must receive exactly one request per attack. (POST, which
// the version handler serves here, so that bodies and trailers go on.)
func TestHostileUpstreamSeesOnlyTheGuardsIdentity(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t, "GET", "HEAD", "POST")
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host := hostport(g.Base)
	head := "POST /api/fulfilment/v4/products HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + globex + "\r\nConnection: close\r\n"
	hidden := "GET /wms/items HTTP/1.1\r\nHost: x\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n"
	attacks := map[string]string{
		"announced trailer":                         "Transfer-Encoding: chunked\r\nTrailer: X-Partner-Id\r\n\r\n1\r\na\r\n0\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n",
		"unannounced trailer with an announced one": "Transfer-Encoding: chunked\r\nTrailer: X-Foo\r\n\r\n1\r\na\r\n0\r\nX-Foo: 1\r\nx-partner-id: " + demoPartner + "\r\n\r\n",
		"unannounced trailer":                       "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n",
		"trailer named in Connection":               "Connection: Trailer\r\nTransfer-Encoding: chunked\r\nTrailer: X_Partner_Id\r\n\r\n0\r\nX_Partner_Id: " + demoPartner + "\r\n\r\n",
		"underscore spelling":                       "X_Partner_Id: " + demoPartner + "\r\nx_partner_id: " + demoPartner + "\r\n\r\n",
		"obs-fold":                                  "X-Foo: a\r\n X-Partner-Id: " + demoPartner + "\r\n\r\n",
		"request in the body":                       fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(hidden), hidden),
		"TE and CL together":                        fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s", 5+len(hidden), hidden),
		"chunk hiding a request":                    fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden),
		"space before the colon":                    "X-Partner-Id : " + demoPartner + "\r\n\r\n",
		"tab before the colon":                      "X-Partner-Id\t: " + demoPartner + "\r\n\r\n",
		"NUL in the name":                           "X-Partner-Id\x00: " + demoPartner + "\r\n\r\n",
		"two Content-Lengths":                       fmt.Sprintf("Content-Length: 0\r\nContent-Length: %d\r\n\r\n%s", len(hidden), hidden),
		"chunked, identity":                         fmt.Sprintf("Transfer-Encoding: chunked, identity\r\n\r\n%s", hidden),
		"xchunked":                                  fmt.Sprintf("Transfer-Encoding: xchunked\r\n\r\n%s", hidden),
		"bare LF line ends":                         "X-Foo: 1\nX-Partner-Id: " + demoPartner + "\r\n\r\n",
	}
	for name, rest := range attacks {
		u.take()
		r := rawHTTP(t, host, head+rest)
		reqs, tunneled := u.take()
		if len(tunneled) != 0 {
			t.Errorf("%s: bytes reached the WMS outside a request: %q", name, tunneled)
		}
		if (r.Status >= 400 && r.Status < 500 || r.Status == http.StatusNotImplemented) && len(reqs) == 0 {
			continue // refused (501: a transfer coding not supported), nothing forwarded: fine
		}
		if r.Status != http.StatusOK || len(reqs) != 1 {
			t.Errorf("%s: answer %d, the WMS received %d requests; want 200 and one request (or a 4xx or 501 and none)", name, r.Status, len(reqs))
		}
		for _, raw := range reqs {
			if ids := identityLines(raw); len(ids) != 1 || ids[0] != "X-Partner-Id: "+globexPartner {
				t.Errorf("%s: the WMS received identity lines %q, want only X-Partner-Id: %s; request:\n%s", name, ids, globexPartner, raw)
			}
		}
	}
	g.noPanic(t)
}

// A protocol upgrade (Upgrade: h2c, as curl --http2 sends on http://, or
// websocket) must never reach the WMS: were the WMS to accept it (101), the
// proxy would copy bytes both ways and the partner could send the WMS any
// request on that connection with any X-Partner-Id (h2c smuggling). The
// interface has no upgrades: the gateway answers the request normally
// without passing Upgrade on.
func TestHostileUpgradeNeverReachesTheWMS(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t)
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host := hostport(g.Base)
	smuggled := "GET /wms/changes HTTP/1.1\r\nHost: x\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n"
	for _, upgrade := range []string{
		"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
		"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		"Connection: keep-alive, upgrade\r\nupgrade: WebSocket\r\n",
		"Connection: Upgrade, X-Partner-Id\r\nUpgrade: h2c\r\n",
	} {
		for _, path := range []string{"/api/fulfilment/v4/products", "/v3/products"} {
			u.take()
			conn, err := net.DialTimeout("tcp", host, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n%s\r\n", path, host, globex, upgrade)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%q: %v", upgrade, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			_, _ = io.WriteString(conn, smuggled)
			_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			_, _ = br.ReadByte() // whatever the gateway makes of it
			conn.Close()
			reqs, tunneled := u.take()
			if resp.StatusCode == http.StatusSwitchingProtocols {
				t.Errorf("%s with %q: the gateway switched protocols", path, upgrade)
			}
			if len(tunneled) != 0 {
				t.Errorf("%s with %q: the WMS received through a tunnel: %q", path, upgrade, tunneled)
			}
			for _, raw := range reqs {
				if h, _, _ := strings.Cut(raw, "\r\n\r\n"); strings.Contains(strings.ToLower(h), "upgrade") {
					t.Errorf("%s with %q: the WMS received an upgrade request:\n%s", path, upgrade, raw)
				}
				if ids := identityLines(raw); len(ids) != 1 || ids[0] != "X-Partner-Id: "+globexPartner {
					t.Errorf("%s with %q: the WMS received identity lines %q, want only globex's", path, upgrade, ids)
				}
			}
		}
	}
	g.noPanic(t)
}

// The gateway also speaks cleartext HTTP/2 (h2c with prior knowledge), where
// Connection and Upgrade do not exist but trailers do: a trailer named
// X-Partner-Id, announced, must not reach the WMS either.
func TestHostileH2CTrailersCannotCarryIdentity(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t, "GET", "HEAD", "POST")
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}, Timeout: 30 * time.Second}
	u.take()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, g.Base+"/api/fulfilment/v4/products", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+globex)
	req.Trailer = http.Header{"X-Partner-Id": nil, "X_partner_id": nil}
	go func() {
		_, _ = io.WriteString(pw, "a")
		req.Trailer.Set("X-Partner-Id", demoPartner)
		req.Trailer["X_partner_id"] = []string{demoPartner}
		pw.Close()
	}()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the gateway answered over HTTP/%d.%d; this test needs cleartext HTTP/2", resp.ProtoMajor, resp.ProtoMinor)
	}
	reqs, _ := u.take()
	if resp.StatusCode != http.StatusOK || len(reqs) != 1 {
		t.Fatalf("answer %d, the WMS received %d requests; want 200 and one", resp.StatusCode, len(reqs))
	}
	if ids := identityLines(reqs[0]); len(ids) != 1 || ids[0] != "X-Partner-Id: "+globexPartner {
		t.Errorf("the WMS received identity lines %q, want only X-Partner-Id: %s; request:\n%s", ids, globexPartner, reqs[0])
	}
	g.noPanic(t)
}

// A GET or HEAD request has no content in the interface. Forwarded to the
// WMS, content on a GET is where request smuggling starts: a legacy server
// that ignores Content-Length on GET (or reads it as the next request on the
// connection) would run a request hidden in the body, with whatever
// X-Partner-Id it carries; and a body that never arrives holds a WMS
// connection for as long as the caller likes. Such content must never reach
// the WMS: the gateway refuses it (400 problem+json) before proxying.
func TestHostileGetContentNeverReachesTheWMS(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t)
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host := hostport(g.Base)
	hidden := "GET /wms/items HTTP/1.1\r\nHost: x\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n"
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for name, rest := range map[string]string{
			"Content-Length":            fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(hidden), hidden),
			"chunked":                   fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden),
			"chunked, empty, a trailer": "Transfer-Encoding: chunked\r\nTrailer: X-Partner-Id\r\n\r\n0\r\nX-Partner-Id: " + demoPartner + "\r\n\r\n",
		} {
			u.take()
			req := method + " /api/fulfilment/v4/products HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + globex + "\r\nConnection: close\r\n" + rest
			r := rawHTTP(t, host, req)
			reqs, _ := u.take()
			if r.Status != http.StatusBadRequest || (method == http.MethodGet && !strings.Contains(r.Body, "invalid-request")) {
				t.Errorf("%s with content (%s): %d %s, want 400 invalid-request", method, name, r.Status, r.Body)
			}
			if len(reqs) != 0 {
				t.Errorf("%s with content (%s): the WMS received %q", method, name, reqs)
			}
		}
	}
	// Content-Length: 0 is no content: served as usual.
	u.take()
	r := rawHTTP(t, host, "GET /api/fulfilment/v4/products HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+globex+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	if reqs, _ := u.take(); r.Status != http.StatusOK || len(reqs) != 1 {
		t.Errorf("GET with Content-Length: 0: %d, the WMS received %d requests; want 200 and one", r.Status, len(reqs))
	}
	g.noPanic(t)
}

// Many server frameworks let a header override the request's method or
// path (X-HTTP-Method-Override and friends: Rails, Express, ASP.NET, Spring;
// X-Original-URL and X-Rewrite-URL: IIS, Symfony). Passed on, they would
// let a partner run a method the version does not serve (a DELETE behind a
// GET) or reach a WMS path no resource maps (the internal change feed)
// while the gateway checked another. None of them reaches the WMS.
func TestHostileOverrideHeadersNeverReachTheWMS(t *testing.T) {
	t.Parallel()
	g, u := startGatewayOnRawUpstream(t)
	globex := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	overrides := []string{
		"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override",
		"X-Original-URL", "X-Rewrite-URL", "X-Original-Method",
	}
	for _, name := range overrides {
		value := "DELETE"
		if strings.HasSuffix(name, "URL") {
			value = "/wms/changes"
		}
		for _, path := range []string{"/api/fulfilment/v4/products/ITM-1", "/v3/products"} {
			u.take()
			status, _, body := do(t, http.MethodGet, g.Base+path, nil, "Authorization", "Bearer "+globex, name, value)
			reqs, _ := u.take()
			if status != http.StatusOK || len(reqs) != 1 {
				t.Errorf("GET %s with %s: %d %s, the WMS received %d requests; want 200 and one", path, name, status, body, len(reqs))
				continue
			}
			if h, _, _ := strings.Cut(reqs[0], "\r\n\r\n"); strings.Contains(strings.ToLower(h), "\r\n"+strings.ToLower(name)+":") {
				t.Errorf("GET %s: the WMS received %s:\n%s", path, name, h)
			}
		}
	}
	g.noPanic(t)
}
