package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// switchingUpstream is a raw upstream on loopback that answers every
// request with 101 Switching Protocols although the gateway asked for no
// upgrade (it removes Upgrade): with Upgrade: websocket, bare, or after a
// 103 (?case=ws, bare, hints).
func switchingUpstream(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				switch req.URL.Query().Get("case") {
				case "ws":
					io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nWMS-BYTES")
				case "bare":
					io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\n\r\nWMS-BYTES")
				case "hints":
					io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </wms/x>\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
				}
				time.Sleep(100 * time.Millisecond) // the tunnel stays open a while
			}()
		}
	}()
	return l.Addr().String()
}

// A 101 the WMS answers to a request that asked for no upgrade cannot be
// forwarded (reverse_proxy refuses the switch and returns without an
// answer): the partner gets a 502 problem, or the site's handle_errors
// routes answer it, never an empty 200 that looks like a success.
func TestUnrequestedSwitchOfTheWMSIsAFailure(t *testing.T) {
	up := switchingUpstream(t)
	withErrors, without := freePort(t), freePort(t)
	version := "\t\t\tmap products items\n\t\t\tversion v4 {\n\t\t\t\tupstream_prefix /wms\n\t\t\t}\n"
	site := func(port int, extra string) string { return versionSite(port, version, "reverse_proxy "+up, extra) }
	cfg, err := adapt(appOptions(t.TempDir()) + site(withErrors, handleErrors) + site(without, ""))
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	tok := token(t, fmt.Sprintf("http://127.0.0.1:%d", without))
	for _, c := range []string{"ws", "bare", "hints"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			target := "/api/fulfilment/v4/products?case=" + c
			res, body := do(t, method, fmt.Sprintf("http://127.0.0.1:%d%s", without, target), tok)
			var p struct{ Status int }
			if res.StatusCode != http.StatusBadGateway || res.Header.Get("Content-Type") != "application/problem+json" ||
				res.Header.Get("X-Request-Id") == "" || strings.Contains(body, "WMS") ||
				method == http.MethodGet && (json.Unmarshal([]byte(body), &p) != nil || p.Status != http.StatusBadGateway) {
				t.Errorf("%s %s: %d %v %q; want a 502 problem with the request id", method, target, res.StatusCode, res.Header, body)
			}
			res, body = do(t, method, fmt.Sprintf("http://127.0.0.1:%d%s", withErrors, target), tok)
			if res.StatusCode != 599 || method == http.MethodGet && body != "handled 502" {
				t.Errorf("%s %s beside handle_errors: %d %q; want handle_errors' 599 for a 502", method, target, res.StatusCode, body)
			}
		}
	}
}
