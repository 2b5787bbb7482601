package versions

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// A request that did not pass the guard (no identity in its context, or an
// identity that is not the guard's) answers 500 problem+json naming the
// misconfiguration, whatever identity header it carries, and is never
// passed on.
func TestVersionHandlerRefusesWithoutTheGuardsIdentity(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for name, prepare := range map[string]func(*http.Request) *http.Request{
		"no vars": func(r *http.Request) *http.Request { return r },
		"no identity": func(r *http.Request) *http.Request {
			return withVerifiedPartner(r, "")
		},
		"a string variable": func(r *http.Request) *http.Request {
			return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{fulfilhttp.PartnerIDVar: testPartner}))
		},
		"an identity without its guard": func(r *http.Request) *http.Request {
			orphan := (*fulfilhttp.IdentityHeaders)(nil).Verified(testPartner)
			return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey,
				map[string]any{fulfilhttp.PartnerIDVar: &orphan}))
		},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil)
		req.Header.Set("X-Partner-Id", testPartner)
		rec, s := serveVersionRequest(t, h, prepare(req))
		if s.called {
			t.Errorf("%s: the request was passed on", name)
		}
		var p fulfilhttp.Problem
		if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(rec.Body.Bytes(), &p) != nil {
			t.Errorf("%s: %d %q %s, want 500 problem+json", name, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			continue
		}
		if p.Type != fulfilhttp.ProblemTypeBase+"misconfigured" || !strings.Contains(p.Detail, "fulfilment_auth") || strings.Contains(p.Detail, ".go") {
			t.Errorf("%s: problem %+v, want type misconfigured naming fulfilment_auth, no stack", name, p)
		}
	}
}

// What reaches the proxy carries the guard's identity under the guard's
// header name, whatever the request's headers said by then.
func TestVersionHandlerForwardsTheGuardsIdentity(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	req := withVerifiedPartner(httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil), testPartner)
	req.Header["X-Partner-Id"] = []string{"partner-globex", testPartner}
	_, s := serveVersionRequest(t, h, req)
	if !s.called || !reflect.DeepEqual(s.header["X-Partner-Id"], []string{testPartner}) {
		t.Errorf("next saw X-Partner-Id %q (called %v), want [%s]", s.header["X-Partner-Id"], s.called, testPartner)
	}

	// The header names fulfilment_auth { identity_header X-Tenant } gives
	// the identities it verifies.
	tenant := &fulfilhttp.IdentityHeaders{Identity: "X-Tenant", Protected: []string{"X-Tenant", "X-Request-Id"}}
	verified := tenant.Verified(testPartner)
	req = httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil)
	req = req.WithContext(context.WithValue(req.Context(), caddyhttp.VarsCtxKey,
		map[string]any{fulfilhttp.PartnerIDVar: &verified}))
	_, s = serveVersionRequest(t, h, req)
	if !reflect.DeepEqual(s.header["X-Tenant"], []string{testPartner}) {
		t.Errorf("a guard with identity_header X-Tenant: next saw X-Tenant %q, want [%s]", s.header["X-Tenant"], testPartner)
	}
}

// Right before the proxy, Connection names none of the guard's headers,
// even when a handler between the guard and this one put them back.
func TestVersionHandlerKeepsGuardHeadersOutOfConnection(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	req := withVerifiedPartner(httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil), testPartner)
	req.Header["Connection"] = []string{"keep-alive, x-partner-id", "X-Request-Id"}
	_, s := serveVersionRequest(t, h, req)
	if got := s.header["Connection"]; !s.called || !reflect.DeepEqual(got, []string{"keep-alive"}) {
		t.Errorf("next saw Connection %q (called %v), want [keep-alive]", got, s.called)
	}
}

// ServeVerified with an identity no guard made (the zero value, or one
// without its guard's headers) refuses as ServeHTTP does, and passes
// nothing on.
func TestVersionHandlerServeVerifiedRefusesAnUnverifiedIdentity(t *testing.T) {
	h := demoVersionHandler()
	provisionVersionHandler(t, h)
	for name, id := range map[string]fulfilhttp.VerifiedPartner{
		"zero":                 {},
		"without its guard":    (*fulfilhttp.IdentityHeaders)(nil).Verified(testPartner),
		"without a partner id": (&fulfilhttp.IdentityHeaders{Identity: "X-Partner-Id"}).Verified(""),
	} {
		rec := httptest.NewRecorder()
		called := false
		next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { called = true; return nil })
		req := httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/products", nil)
		if err := h.ServeVerified(rec, req, next, id); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if called || rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "misconfigured") {
			t.Errorf("%s: passed on %v, answered %d %s; want 500 misconfigured and nothing passed on", name, called, rec.Code, rec.Body)
		}
	}
}
