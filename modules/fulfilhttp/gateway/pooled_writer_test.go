package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The version handler's problem writer (wmserrors) comes from a pool and
// goes back to it when the proxy has run. These tests send mixed traffic
// through a real Caddy (this process, so that -race sees it) and a real
// upstream on loopback: error answers and successes, 1xx answers, bodies
// streamed slowly with flushes, bodies the upstream cuts (the proxy then
// panics with http.ErrAbortHandler), attempts the proxy retries
// (lb_retries), an upstream nothing listens on (handle_errors, or a
// problem where a site has none), HEAD, and callers that go away
// mid-body; over HTTP/1.1 and cleartext HTTP/2 at once. A writer used by
// two requests, or one that keeps anything of its last request, gives an
// answer that is not its own request's: another request's id, status,
// body, or a lost header.

// mixedUpstream stands in for the WMS. Each request names what the WMS does
// (?case=) and carries a number (?n=) the answer echoes; the upstream
// records the request id the gateway sent with each number.
type mixedUpstream struct {
	srv   *httptest.Server
	ids   sync.Map // n -> the X-Request-Id the gateway sent
	tries sync.Map // n -> attempts seen (case flaky)
}

func newMixedUpstream(t *testing.T) *mixedUpstream {
	u := new(mixedUpstream)
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// wmsError answers like the legacy WMS does an error.
func wmsError(w http.ResponseWriter, status int, n string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", n) // kept on a problem: tells whose answer it is
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"errorCode":"WMS-%d","errorMessage":"row %s"}`, status, n)
}

// slowBody writes n's body in five flushed pieces with pauses.
func slowBody(w http.ResponseWriter, n, id string) {
	for i := range 5 {
		fmt.Fprintf(w, "%s:%s:%d;", n, id, i)
		http.NewResponseController(w).Flush()
		time.Sleep(2 * time.Millisecond)
	}
}

func (u *mixedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, kind, id := q.Get("n"), q.Get("case"), r.Header.Get("X-Request-Id")
	u.ids.Store(n, id)
	w.Header().Set("Server", "LegacyWMS/4.2")
	switch kind {
	case "ok":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%q,"id":%q}`, n, id)
	case "e404":
		wmsError(w, http.StatusNotFound, n)
	case "e500":
		wmsError(w, http.StatusInternalServerError, n)
	case "e503":
		wmsError(w, http.StatusServiceUnavailable, n)
	case "hints-ok", "hints-err":
		w.Header().Set("Link", "</hint/"+n+">; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		time.Sleep(time.Millisecond)
		if kind == "hints-err" {
			wmsError(w, http.StatusInternalServerError, n)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%q,"id":%q}`, n, id)
	case "storm": // 1xx answers while the caller goes away
		for range 5 {
			w.Header().Set("Link", "</storm/"+n+">; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			time.Sleep(time.Millisecond)
		}
		w.Header().Del("Link")
		fmt.Fprintf(w, `{"n":%q,"id":%q}`, n, id)
	case "slow", "sse", "gone":
		if kind == "sse" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		slowBody(w, n, id)
	case "slow-err":
		w.Header().Set("Retry-After", n)
		w.WriteHeader(http.StatusInternalServerError)
		slowBody(w, n, id)
	case "cut":
		w.Header().Set("Content-Length", "1000")
		fmt.Fprintf(w, "%s:%s;", n, id)
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // the connection closes mid-body
	case "flaky":
		v, _ := u.tries.LoadOrStore(n, new(atomic.Int32))
		if v.(*atomic.Int32).Add(1) == 1 {
			panic(http.ErrAbortHandler) // the first attempt gets no answer
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%q,"id":%q}`, n, id)
	default:
		http.Error(w, "unknown case", http.StatusTeapot)
	}
}

// poolSiteCaddyfile is two gateway sites in front of up (v4 and the
// deprecated v3) with a version v9 whose upstream, down, nothing listens
// on; the first site has handle_errors routes, the second none.
func poolSiteCaddyfile(dir string, withErrors, without int, up, down string) string {
	version := fmt.Sprintf(`			map products items
			expose shipments
			version v4 {
				upstream_prefix /wms
				upstream %s
			}
			version v3 {
				upstream_prefix /wms/classic
				upstream %s
				deprecated 2026-06-01T00:00:00Z successor v4
			}
			version v9 {
				upstream %s
			}
`, up, up, down)
	proxy := "reverse_proxy {fulfilment.upstream} {\n\t\tlb_retries 2\n\t}"
	return appOptions(dir) + versionSite(withErrors, version, proxy, handleErrors) + versionSite(without, version, proxy, "")
}

// poolCase is one request of the mixed traffic and what must come back.
type poolCase struct {
	kind    string
	method  string
	version string
}

var poolCases = []poolCase{
	{"ok", "GET", "v4"}, {"ok", "GET", "v3"}, {"ok", "HEAD", "v4"},
	{"e404", "GET", "v4"}, {"e500", "GET", "v3"}, {"e503", "GET", "v4"}, {"e500", "HEAD", "v3"},
	{"hints-ok", "GET", "v4"}, {"hints-err", "GET", "v3"},
	{"slow", "GET", "v4"}, {"sse", "GET", "v3"}, {"slow-err", "GET", "v4"},
	{"cut", "GET", "v4"}, {"flaky", "GET", "v3"}, {"gone", "GET", "v4"},
	{"down", "GET", "v9"}, {"storm", "GET", "v4"}, {"hints-ok", "GET", "v3"}, {"storm", "GET", "v3"},
}

// poolClient sends the traffic: HTTP/1.1, or cleartext HTTP/2 with prior
// knowledge.
func poolClient(h2c bool) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}
	if h2c {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// checkPoolAnswer sends c as request n to base (hasErrors: the site has
// handle_errors routes) and checks that the answer is n's own.
func checkPoolAnswer(ctx context.Context, client *http.Client, up *mixedUpstream, base, tok string, hasErrors bool, c poolCase, n int) error {
	ns := strconv.Itoa(n)
	url := fmt.Sprintf("%s/api/fulfilment/%s/products?case=%s&n=%s", base, c.version, c.kind, ns)
	var hints []string
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		mu.Lock()
		defer mu.Unlock()
		hints = append(hints, fmt.Sprint(code, " ", h.Values("Link")))
		return nil
	}})
	if c.kind == "storm" {
		// The caller goes away while the proxy is given 1xx answers.
		time.AfterFunc(3*time.Millisecond, cancel)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := client.Do(req)
	if c.kind == "storm" {
		if err == nil {
			res.Body.Close()
		}
		return nil // whatever reached a caller who went away
	}
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer res.Body.Close()
	if c.kind == "gone" { // the caller goes away after the first piece
		_, err := io.ReadFull(res.Body, make([]byte, 3))
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		return nil
	}
	body, readErr := io.ReadAll(res.Body)
	id := res.Header.Get("X-Request-Id")
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s %s (%s): %d %v %q: %s", c.method, url, c.kind, res.StatusCode, res.Header, body, fmt.Sprintf(format, args...))
	}
	if ids := res.Header.Values("X-Request-Id"); len(ids) != 1 {
		return fail("X-Request-Id %q, want exactly one", ids)
	}
	if c.kind == "down" {
		if readErr != nil {
			return fail("reading: %v", readErr)
		}
		if hasErrors {
			if res.StatusCode != 599 || string(body) != "handled 502" {
				return fail("want handle_errors' 599 for the proxy's 502")
			}
			return nil
		}
		return checkProblem(res, body, 502, fail)
	}
	sent, _ := up.ids.Load(ns)
	if sent != id {
		return fail("the answer's request id %q, the upstream got %q for this request", id, sent)
	}
	if dep := res.Header.Get("Deprecation") != ""; dep != (c.version == "v3") {
		return fail("Deprecation header %q for version %s", res.Header.Get("Deprecation"), c.version)
	}
	own := fmt.Sprintf(`{"n":%q,"id":%q}`, ns, id)
	if c.method == http.MethodHead {
		own = ""
	}
	mu.Lock()
	gotHints := strings.Join(hints, ",")
	mu.Unlock()
	// The WMS's informational answers are held back, and the final answer
	// keeps the headers the gateway set (for v3, the successor Link).
	if gotHints != "" {
		return fail("1xx answers %q reached the caller, want none", gotHints)
	}
	if c.version == "v3" && !strings.Contains(res.Header.Get("Link"), `rel="successor-version"`) {
		return fail("Link %q, want the gateway's successor-version link", res.Header.Values("Link"))
	}
	switch c.kind {
	case "ok", "hints-ok", "flaky":
		if readErr != nil || res.StatusCode != 200 || string(body) != own {
			return fail("reading: %v; want 200 with %s", readErr, own)
		}
	case "slow", "sse":
		var want strings.Builder
		for i := range 5 {
			fmt.Fprintf(&want, "%s:%s:%d;", ns, id, i)
		}
		if readErr != nil || res.StatusCode != 200 || string(body) != want.String() {
			return fail("reading: %v; want 200 with %s", readErr, want.String())
		}
	case "cut":
		if res.StatusCode != 200 || !strings.HasPrefix(ns+":"+id+";", string(body)) || readErr == nil {
			return fail("reading: %v; want 200 and a cut body, a prefix of %s:%s;", readErr, ns, id)
		}
	default: // an error answer of the WMS
		if readErr != nil {
			return fail("reading: %v", readErr)
		}
		status := map[string]int{"e404": 404, "e500": 500, "e503": 503, "hints-err": 500, "slow-err": 500}[c.kind]
		if err := checkProblem(res, body, status, fail); err != nil {
			return err
		}
		if res.Header.Get("Retry-After") != ns {
			return fail("Retry-After %q, want this request's %s", res.Header.Get("Retry-After"), ns)
		}
	}
	return nil
}

// checkProblem checks that res is a problem of status with nothing of the
// WMS's error answer (for HEAD, without a body).
func checkProblem(res *http.Response, body []byte, status int, fail func(string, ...any) error) error {
	if res.StatusCode != status || res.Header.Get("Content-Type") != "application/problem+json" ||
		strings.Contains(res.Header.Get("Server"), "LegacyWMS") {
		return fail("want a %d problem", status)
	}
	if res.Request.Method == http.MethodHead {
		if len(body) != 0 {
			return fail("a body for HEAD")
		}
		return nil
	}
	var p struct{ Status int }
	if json.Unmarshal(body, &p) != nil || p.Status != status || strings.Contains(string(body), "WMS-") {
		return fail("want a %d problem body", status)
	}
	return nil
}

// Concurrent mixed traffic through the real gateway and proxy: every
// answer is its own request's.
func TestPooledProblemWritersUnderMixedTraffic(t *testing.T) {
	up := newMixedUpstream(t)
	withErrors, without := freePort(t), freePort(t)
	cfg, err := adapt(poolSiteCaddyfile(t.TempDir(), withErrors, without, up.srv.Listener.Addr().String(),
		fmt.Sprintf("127.0.0.1:%d", freePort(t))))
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg)
	bases := []string{fmt.Sprintf("http://127.0.0.1:%d", withErrors), fmt.Sprintf("http://127.0.0.1:%d", without)}
	tok := token(t, bases[0])

	const workers, perWorker = 8, 48
	errs := make(chan error, workers*perWorker)
	var wg sync.WaitGroup
	for w := range workers {
		client := poolClient(w%2 == 1)
		wg.Go(func() {
			defer client.CloseIdleConnections()
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWorker {
				c := poolCases[rnd.IntN(len(poolCases))]
				site := rnd.IntN(2)
				if err := checkPoolAnswer(t.Context(), client, up, bases[site], tok, site == 0, c, w*perWorker+i); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 10 {
			t.Error(err)
		}
	}
	if n > 10 {
		t.Errorf("... and %d more", n-10)
	}
}
