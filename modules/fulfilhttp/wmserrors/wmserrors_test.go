package wmserrors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// wmsAnswer is a next handler that answers like the legacy WMS, writing its
// body with Write or, like reverse_proxy's copy, through io.Copy.
func wmsAnswer(status int, body string, viaCopy bool) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Server", "LegacyWMS/4.2")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.Header().Set("Allow", "GET")
		w.WriteHeader(status)
		if viaCopy {
			_, err := io.Copy(w, strings.NewReader(body))
			return err
		}
		_, err := w.Write([]byte(body))
		return err
	})
}

func TestUpstreamErrorsBecomeProblems(t *testing.T) {
	const wmsError = `{"errorCode":"WMS-404-NO-SUCH-RESOURCE","errorMessage":"table ITEMS row 4 missing"}`
	tests := []struct {
		name       string
		next       caddyhttp.Handler
		wantStatus int
		wantType   string
	}{
		{"404 written", wmsAnswer(404, wmsError, false), 404, "not-found"},
		{"404 copied", wmsAnswer(404, wmsError, true), 404, "not-found"},
		{"405 keeps Allow", wmsAnswer(405, wmsError, false), 405, "method-not-allowed"},
		{"400", wmsAnswer(400, wmsError, false), 400, "rejected"},
		{"upstream 401 is the gateway's problem", wmsAnswer(401, wmsError, false), 502, "upstream-error"},
		{"500", wmsAnswer(500, wmsError, true), 500, "upstream-error"},
		{"503 keeps Retry-After", wmsAnswer(503, wmsError, false), 503, "upstream-unavailable"},
		{"proxy could not dial", caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
			return caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp 127.0.0.1:1: connection refused"))
		}), 502, "upstream-unavailable"},
		{"plain error", caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
			return errors.New("boom")
		}), 502, "upstream-unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("X-Trace", "rid-1") // set by the gateway before proxying
			rec.Header().Set("Server", "Caddy")  // which the WMS's answer overwrites
			req := httptest.NewRequest(http.MethodGet, "/wms/items/4", nil)
			if err := New(zap.NewNop()).ServeHTTP(rec, req, tt.next); err != nil {
				t.Fatalf("error returned: %v", err)
			}
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			var p fulfilhttp.Problem
			if res.StatusCode != tt.wantStatus || res.Header.Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(body, &p) != nil || p.Status != tt.wantStatus || p.Type != fulfilhttp.ProblemTypeBase+tt.wantType {
				t.Fatalf("got %d %q %s", res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			if strings.Contains(string(body), "WMS-") || strings.Contains(string(body), "ITEMS") || res.Header.Get("Server") != "Caddy" {
				t.Fatalf("the WMS's error leaked to the partner: %v %s", res.Header, body)
			}
			if res.Header.Get("X-Trace") != "rid-1" {
				t.Fatalf("a header the gateway set (the request id) was dropped: %v", res.Header)
			}
			if tt.wantStatus == 405 && res.Header.Get("Allow") != "GET" {
				t.Fatalf("Allow dropped: %v", res.Header)
			}
			if tt.wantStatus == 503 && res.Header.Get("Retry-After") != "7" {
				t.Fatalf("Retry-After dropped: %v", res.Header)
			}
		})
	}
}

func TestUpstreamSuccessPassesThrough(t *testing.T) {
	for _, viaCopy := range []bool{false, true} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
		const body = `{"items":[],"page":1}`
		if err := New(zap.NewNop()).ServeHTTP(rec, req, wmsAnswer(200, body, viaCopy)); err != nil {
			t.Fatal(err)
		}
		if rec.Code != 200 || rec.Body.String() != body || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("viaCopy=%v: a success was changed: %d %v %s", viaCopy, rec.Code, rec.Header(), rec.Body)
		}
	}
}

// However many headers the gateway set before proxying (the request id,
// Server, the deprecation headers, a header directive's), an error answer
// keeps every one of them with the gateway's value.
func TestUpstreamErrorKeepsEveryHeaderTheGatewaySet(t *testing.T) {
	rec := httptest.NewRecorder()
	ours := http.Header{}
	for i := range 9 {
		ours.Set(fmt.Sprintf("X-Gateway-%d", i), fmt.Sprint("value-", i))
	}
	for k, v := range ours {
		rec.Header()[k] = v
	}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Add("X-Gateway-3", "the WMS's") // as reverse_proxy copies its headers
		w.WriteHeader(http.StatusInternalServerError)
		return nil
	})
	req := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
	if err := New(zap.NewNop()).ServeHTTP(rec, req, next); err != nil {
		t.Fatal(err)
	}
	for k, v := range ours {
		if got := rec.Header().Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("the problem answer's %s is %q, want the gateway's %q", k, got, v[0])
		}
	}
}
