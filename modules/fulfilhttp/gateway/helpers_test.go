package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// recorder is a real HTTP server on loopback standing in for the WMS: it
// answers 200, reads each request's body to the end (so that its trailers
// arrive) and records what it got.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []received
}

// received is one request as the upstream read it.
type received struct {
	method, uri, body string
	header, trailer   http.Header
}

func newRecorder(t *testing.T) *recorder {
	rec := new(recorder)
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // a cut body is recorded as far as it came
		rec.mu.Lock()
		rec.seen = append(rec.seen, received{r.Method, r.RequestURI, string(body), r.Header.Clone(), r.Trailer.Clone()})
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[]}`)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// take returns the requests the upstream got since the last call.
func (rec *recorder) take() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	s := rec.seen
	rec.seen = nil
	return s
}

// addr is the upstream's host:port, for reverse_proxy.
func (rec *recorder) addr() string { return strings.TrimPrefix(rec.srv.URL, "http://") }

// uris lists the request targets of rs.
func uris(rs []received) []string {
	var s []string
	for _, r := range rs {
		s = append(s, r.uri)
	}
	return s
}

// versionBlock is the demo's version mapping, as a job of the gateway.
const versionBlock = `		version {
			map products items
			expose shipments
			version v4 {
				upstream_prefix /wms
			}
		}
`

// gatewayCaddyfile is a Caddyfile with the fulfilment app (the test
// partners) and a site on port running a gateway of the given jobs (its
// block's lines), then reverse_proxy to up.
func gatewayCaddyfile(dir string, port int, jobs, up string) string {
	return appOptions(dir) + fmt.Sprintf(`
http://127.0.0.1:%d {
	bind 127.0.0.1
	fulfilment_gateway {
%s	}
	reverse_proxy %s
}
`, port, jobs, up)
}

// versionSite is a site on port with a gateway of the token endpoint, the
// guard and the version mapping (version: its block's lines), then proxy
// (the proxy's directive, with its block if any) and extra (more lines of
// the site).
func versionSite(port int, version, proxy, extra string) string {
	return fmt.Sprintf(`
http://127.0.0.1:%d {
	bind 127.0.0.1
	fulfilment_gateway {
		token
		auth
		version {
%s		}
	}
	%s
%s}
`, port, version, proxy, extra)
}

// handleErrors are site lines with handle_errors routes that answer every
// error with 599 and "handled <status>".
const handleErrors = "\thandle_errors {\n\t\trespond \"handled {err.status_code}\" 599\n\t}\n"

// appOptions are the tests' global options: no admin endpoint, and the
// fulfilment app with its data in dir and the test partner partner-acme.
func appOptions(dir string) string {
	return fmt.Sprintf(`{
	admin off
	fulfilment {
		data_dir %s
		tokens {
			partner partner-acme {
				client %s %s
			}
		}
	}
}
`, dir, fulfilmenttest.AcmeID, fulfilmenttest.AcmeSecret)
}

// adapt adapts a Caddyfile to JSON.
func adapt(cf string) ([]byte, error) {
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
	return cfg, err
}

// run runs the Caddy config cfg in this process until the test ends.
// (Caddy runs one config per process: these tests do not run in
// parallel.)
func run(t *testing.T, cfg []byte) {
	t.Helper()
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
}

// startGateway runs a gateway site with the given jobs in front of a new
// upstream, and returns the site's base URL and the upstream.
func startGateway(t *testing.T, jobs string) (string, *recorder) {
	t.Helper()
	up := newRecorder(t)
	port := freePort(t)
	cfg, err := adapt(gatewayCaddyfile(t.TempDir(), port, jobs, up.addr()))
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	return fmt.Sprintf("http://127.0.0.1:%d", port), up
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// token gets an access token from base's token endpoint as a partner's
// software would.
func token(t *testing.T, base string) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: fulfilmenttest.AcmeID, ClientSecret: fulfilmenttest.AcmeSecret,
		TokenURL: base + DefaultTokenPath}
	tok, err := cfg.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends method to base+path with the bearer token (if any) and the
// headers given as name, value pairs, and returns the answer and its body.
func do(t *testing.T, method, url, bearer string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// fulfilmentToken is an access token of the test partner's client from
// the running fulfilment app's token service (for a gateway without a
// token endpoint).
func fulfilmentToken(t *testing.T) string {
	t.Helper()
	app, err := fulfilment.ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := app.TokenService().Authenticate(fulfilmenttest.AcmeID, fulfilmenttest.AcmeSecret)
	if !ok {
		t.Fatal("the test client does not authenticate")
	}
	tok, err := app.TokenService().Token(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}
