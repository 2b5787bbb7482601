package versions

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// A method the version does not serve answers 405 problem+json with Allow
// and never reaches the upstream; a served one goes on. By default a
// version serves GET and HEAD.
func TestVersionHandlerRefusesMethodsItDoesNotServe(t *testing.T) {
	h := demoVersionHandler()
	h.Versions[1].Methods = []string{"GET", "HEAD", "POST"}
	provisionVersionHandler(t, h)
	for _, tc := range []struct {
		method, target string
		served         bool
		allow          string
	}{
		{http.MethodGet, "/api/fulfilment/v4/products", true, ""},
		{http.MethodHead, "/v4/products/42", true, ""},
		{http.MethodPost, "/api/fulfilment/v4/outbounds", false, "GET, HEAD"},
		{http.MethodPut, "/api/fulfilment/v4/products/42", false, "GET, HEAD"},
		{http.MethodPatch, "/v4/products/42", false, "GET, HEAD"},
		{http.MethodDelete, "/api/fulfilment/v4/shipments/1", false, "GET, HEAD"},
		{http.MethodOptions, "/api/fulfilment/v4/products", false, "GET, HEAD"},
		{http.MethodTrace, "/api/fulfilment/v4/products", false, "GET, HEAD"},
		{"PROPFIND", "/api/fulfilment/v4/products", false, "GET, HEAD"},
		{http.MethodPost, "/api/fulfilment/v3/outbounds", true, ""},
		{http.MethodDelete, "/api/fulfilment/v3/outbounds/1", false, "GET, HEAD, POST"},
	} {
		req := withVerifiedPartner(httptest.NewRequest(tc.method, tc.target, nil), testPartner)
		rec, s := serveVersionRequest(t, h, req)
		if tc.served {
			if !s.called {
				t.Errorf("%s %s: %d %s, want it passed on", tc.method, tc.target, rec.Code, rec.Body)
			}
			continue
		}
		var p fulfilhttp.Problem
		if s.called || rec.Code != http.StatusMethodNotAllowed || json.Unmarshal(rec.Body.Bytes(), &p) != nil ||
			p.Type != fulfilhttp.ProblemTypeBase+"method-not-allowed" || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d %s (passed on: %v), want 405 problem+json method-not-allowed", tc.method, tc.target, rec.Code, rec.Body, s.called)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.target, got, tc.allow)
		}
	}
	// An unknown resource stays a 404 whatever the method.
	rec, _ := serveVersionRequest(t, h, withVerifiedPartner(httptest.NewRequest(http.MethodDelete, "/api/fulfilment/v4/_debug", nil), testPartner))
	if rec.Code != http.StatusNotFound {
		t.Errorf("DELETE on an unknown resource: %d, want 404", rec.Code)
	}
}
