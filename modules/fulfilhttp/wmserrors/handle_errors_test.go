package wmserrors

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// inServer returns req as Caddy passes it to its handlers in a server whose
// handle_errors has routes (or none).
func inServer(req *http.Request, errorRoutes bool) *http.Request {
	srv := new(caddyhttp.Server)
	if errorRoutes {
		srv.Errors = &caddyhttp.HTTPErrorConfig{Routes: caddyhttp.RouteList{{}}}
	}
	return req.WithContext(context.WithValue(req.Context(), caddyhttp.ServerCtxKey, srv))
}

// failingProxy is a next handler that, like reverse_proxy, returns an
// error without answering.
func failingProxy(err error) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return err })
}

// A server with handle_errors routes answers a failed proxy attempt with
// them: the rewriter returns the error to Caddy with its status and writes
// nothing itself.
func TestProxyFailureGoesToHandleErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus int
	}{
		{"proxy could not dial", caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp 127.0.0.1:1: connection refused")), 502},
		{"proxy timed out", caddyhttp.Error(http.StatusGatewayTimeout, errors.New("timeout")), 504},
		{"plain error", errors.New("boom"), 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := inServer(httptest.NewRequest(http.MethodGet, "/wms/items", nil), true)
			err := New(zap.NewNop()).ServeHTTP(rec, req, failingProxy(tc.err))
			var he caddyhttp.HandlerError
			if !errors.As(err, &he) || he.StatusCode != tc.wantStatus {
				t.Fatalf("returned %v, want a HandlerError with status %d for the server's handle_errors routes", err, tc.wantStatus)
			}
			if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
				t.Fatalf("the rewriter answered itself (%d %v %s); handle_errors must write the answer", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}

// Without handle_errors routes, or while they already answer an error (an
// error returned there would get only a status line), a failed proxy
// attempt is answered as a problem.
func TestProxyFailureIsAProblemWithoutErrorRoutes(t *testing.T) {
	inErrorChain := func(req *http.Request) *http.Request {
		req = inServer(req, true)
		return req.WithContext(context.WithValue(req.Context(), caddyhttp.ErrorCtxKey, errors.New("first error")))
	}
	for name, prepare := range map[string]func(*http.Request) *http.Request{
		"server without handle_errors": func(r *http.Request) *http.Request { return inServer(r, false) },
		"inside handle_errors":         inErrorChain,
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := prepare(httptest.NewRequest(http.MethodGet, "/wms/items", nil))
			err := New(zap.NewNop()).ServeHTTP(rec, req, failingProxy(caddyhttp.Error(http.StatusBadGateway, errors.New("refused"))))
			if err != nil || rec.Code != http.StatusBadGateway || rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("got %v, %d %q; want the failure answered as a 502 problem", err, rec.Code, rec.Header().Get("Content-Type"))
			}
		})
	}
}

// An answer the WMS gave is the rewriter's to turn into a problem whether or
// not the server has handle_errors routes: they are for handler errors.
func TestWMSErrorAnswerIsAProblemBesideHandleErrors(t *testing.T) {
	rec := httptest.NewRecorder()
	req := inServer(httptest.NewRequest(http.MethodGet, "/wms/items", nil), true)
	err := New(zap.NewNop()).ServeHTTP(rec, req, wmsAnswer(http.StatusInternalServerError, `{"errorCode":"WMS-500"}`, true))
	if err != nil || rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("got %v, %d %q %s; want the WMS's 500 answered as a problem", err, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}
