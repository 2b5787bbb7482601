package wmserrors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// goneRequest is a request whose partner went away (its context is
// cancelled), as Caddy's handlers see it then.
func goneRequest() *http.Request {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return httptest.NewRequest(http.MethodGet, "/wms/items", nil).WithContext(ctx)
}

// proxyRecordsGone answers as Caddy 2.11's reverse_proxy does when the
// partner went away during the round trip: WriteHeader(499) for the access
// log, and no error.
var proxyRecordsGone = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(statusClientClosed)
	return nil
})

// A partner that went away gets no problem written to its closed
// connection, and its leaving is not logged as a failure of the WMS:
// whether the proxy records the 499 itself or returns it as an error.
func TestAPartnerThatWentAwayGetsOnlyTheStatus(t *testing.T) {
	for name, next := range map[string]caddyhttp.Handler{
		"the proxy records 499": proxyRecordsGone,
		"the proxy returns 499": failingProxy(caddyhttp.Error(statusClientClosed, context.Canceled)),
	} {
		t.Run(name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			rec := httptest.NewRecorder()
			rec.Header().Set("X-Request-Id", "rid-1")
			if err := New(zap.New(core)).ServeHTTP(rec, goneRequest(), next); err != nil {
				t.Fatal(err)
			}
			if rec.Code != statusClientClosed || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
				t.Fatalf("a partner that went away got %d %v %q, want the status 499 alone (for the access log)", rec.Code, rec.Header(), rec.Body)
			}
			for _, e := range logs.All() {
				if e.Level >= zapcore.WarnLevel {
					t.Errorf("a partner that went away was logged at %s: %q", e.Level, e.Message)
				}
			}
		})
	}
}

// The WMS's own 499, or a 499 error while the partner is still there, is
// an error answer like any other: a problem, and a failure logged.
func TestA499OfTheWMSIsAProblem(t *testing.T) {
	live := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
	rec := httptest.NewRecorder()
	if err := New(zap.NewNop()).ServeHTTP(rec, live, wmsAnswer(statusClientClosed, `{"err":"E499 client quit"}`, false)); err != nil {
		t.Fatal(err)
	}
	if rec.Code != statusClientClosed || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("the WMS's 499 to a partner still there: %d %v %s, want a problem", rec.Code, rec.Header(), rec.Body)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	rec = httptest.NewRecorder()
	if err := New(zap.New(core)).ServeHTTP(rec, live, failingProxy(caddyhttp.Error(statusClientClosed, context.Canceled))); err != nil {
		t.Fatal(err)
	}
	if rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("a 499 error while the partner is still there: %d %v %s, want a problem", rec.Code, rec.Header(), rec.Body)
	}
	if n := logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 1 {
		t.Errorf("a 499 error while the partner is still there was logged at error level %d times, want once", n)
	}
}

// With handle_errors routes, a partner that went away is not sent to
// them (they would write a body to the closed connection): the status
// alone, as without them.
func TestAPartnerThatWentAwaySkipsTheErrorRoutes(t *testing.T) {
	rec := httptest.NewRecorder()
	err := New(zap.NewNop()).ServeHTTP(rec, inServer(goneRequest(), true), failingProxy(caddyhttp.Error(statusClientClosed, context.Canceled)))
	if err != nil {
		t.Fatalf("returned %v to Caddy's handle_errors for a partner that went away, want nil", err)
	}
	if rec.Code != statusClientClosed || rec.Body.Len() != 0 {
		t.Fatalf("got %d %q, want the status 499 alone", rec.Code, rec.Body)
	}
}

// The WMS's own 499 as the partner goes away: the WMS's headers are not
// sent with the bare status, the gateway's are.
func TestAPartnerThatWentAwayGetsNoneOfTheWMSsHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "rid-1")
	err := New(zap.NewNop()).ServeHTTP(rec, goneRequest(), wmsAnswer(statusClientClosed, `{"err":"E499"}`, false))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != statusClientClosed || rec.Body.Len() != 0 {
		t.Fatalf("got %d %q, want the status 499 alone", rec.Code, rec.Body)
	}
	if rec.Header().Get("Server") != "" || rec.Header().Get("Content-Type") != "" || rec.Header().Get("X-Request-Id") != "rid-1" {
		t.Errorf("headers %v: want the gateway's X-Request-Id and none of the WMS's", rec.Header())
	}
}

// A request whose deadline passed (a handler's timeout, not the partner
// leaving) with a 499 from the WMS is an error answer like any other.
func TestADeadlineIsNotAPartnerGone(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	req := httptest.NewRequest(http.MethodGet, "/wms/items", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	if err := New(zap.NewNop()).ServeHTTP(rec, req, wmsAnswer(statusClientClosed, `{"err":"E499"}`, false)); err != nil {
		t.Fatal(err)
	}
	if rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("a 499 after a deadline: %d %v %q, want a problem", rec.Code, rec.Header(), rec.Body)
	}
}
