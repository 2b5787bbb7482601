package wmserrors

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// A proxy that returns without an answer (reverse_proxy, when the WMS
// switched protocols unasked) failed: answered as a 502 problem, or handed
// to the server's handle_errors routes, never left to net/http's empty
// 200. (A 103 before it: see the gateway's
// TestUnrequestedSwitchOfTheWMSIsAFailure; httptest's recorder takes a
// 1xx for the final status.)
func TestProxyWithoutAnAnswerIsAFailure(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "rid-1")
	req := inServer(httptest.NewRequest(http.MethodGet, "/wms/items", nil), false)
	err := New(zap.NewNop()).ServeHTTP(rec, req, failingProxy(nil))
	if err != nil || rec.Code != http.StatusBadGateway || rec.Header().Get("Content-Type") != "application/problem+json" ||
		rec.Header().Get("X-Request-Id") != "rid-1" {
		t.Fatalf("got %v, %d %v %s; want a 502 problem with the gateway's headers", err, rec.Code, rec.Header(), rec.Body)
	}

	rec = httptest.NewRecorder()
	req = inServer(httptest.NewRequest(http.MethodGet, "/wms/items", nil), true)
	err = New(zap.NewNop()).ServeHTTP(rec, req, failingProxy(nil))
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) || he.StatusCode != http.StatusBadGateway || rec.Body.Len() != 0 {
		t.Fatalf("beside handle_errors: returned %v, wrote %s; want a 502 HandlerError and nothing written", err, rec.Body)
	}
}

// A switch of protocols that went through (101, then the proxy copies
// bytes on the hijacked connection) is an answer: nothing is written
// after it.
func TestSwitchedProtocolsIsAnAnswer(t *testing.T) {
	rec := httptest.NewRecorder()
	req := inServer(httptest.NewRequest(http.MethodGet, "/wms/items", nil), false)
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(http.StatusSwitchingProtocols)
		return nil
	})
	if err := New(zap.NewNop()).ServeHTTP(rec, req, next); err != nil || rec.Code != http.StatusSwitchingProtocols || rec.Body.Len() != 0 {
		t.Fatalf("got %v, %d %s; want the 101 alone", err, rec.Code, rec.Body)
	}
}
