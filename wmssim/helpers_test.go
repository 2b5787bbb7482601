package wmssim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// adapter serves a Caddy middleware handler as a plain http.Handler with a
// next handler that fails the test if the terminal simulator ever calls it.
type adapter struct {
	t *testing.T
	h caddyhttp.MiddlewareHandler
}

func (a adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		a.t.Errorf("the simulator called the next handler for %s %s", r.Method, r.URL)
		return nil
	})
	if err := a.h.ServeHTTP(w, r, next); err != nil {
		a.t.Errorf("ServeHTTP returned %v", err)
	}
}

// fakeClock is an injectable clock for the store.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// sim is a provisioned simulator behind a loopback httptest server.
type sim struct {
	t     *testing.T
	h     *Handler
	srv   *httptest.Server
	clock *fakeClock
}

var simCount atomic.Int64

// newSim provisions a Handler (unique warehouse name, seeded as asked) with a
// fake clock and serves it on 127.0.0.1.
func newSim(t *testing.T, seed bool) *sim {
	t.Helper()
	h := &Handler{Name: fmt.Sprintf("test-%s-%d", t.Name(), simCount.Add(1)), Seed: &seed}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Cleanup() })
	clock := &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	h.logger = zap.NewNop()
	h.store.mu.Lock()
	h.store.now = clock.Now
	h.store.baseSeq, h.store.lastSeq = 0, 0 // number changes 1, 2, ... in these tests
	h.store.mu.Unlock()
	srv := httptest.NewServer(adapter{t, h})
	t.Cleanup(srv.Close)
	return &sim{t: t, h: h, srv: srv, clock: clock}
}

// do sends a request; header is name, value pairs. It returns status,
// headers and body.
func (s *sim) do(method, path, body string, header ...string) (int, http.Header, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// mustJSON sends a request, expects want and decodes the body into v.
func (s *sim) mustJSON(want int, method, path, body string, v any, header ...string) http.Header {
	s.t.Helper()
	status, h, b := s.do(method, path, body, header...)
	if status != want {
		s.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, b)
	}
	if ct := h.Get("Content-Type"); status != http.StatusNoContent && ct != "application/json" {
		s.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			s.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return h
}

// wantError expects status with the old system's error body and code.
func (s *sim) wantError(status int, code, method, path, body string, header ...string) wmsError {
	s.t.Helper()
	var e wmsError
	s.mustJSON(status, method, path, body, &e, header...)
	if e.ErrorCode != code || e.ErrorMessage == "" {
		s.t.Fatalf("%s %s: error %+v, want code %s with a message", method, path, e, code)
	}
	return e
}

// feed reads one page of the change feed.
func (s *sim) feed(query string) feedPage {
	s.t.Helper()
	var p feedPage
	s.mustJSON(http.StatusOK, http.MethodGet, "/wms/changes"+query, "", &p)
	return p
}
