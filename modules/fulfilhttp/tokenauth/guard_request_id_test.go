package tokenauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
)

// The guard's request id: the same on the answer, upstream and in the
// variable, new for every request, never the partner's.
func TestAuthGuardRequestID(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	w, seen := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken, "X-Request-Id", "chosen-by-partner")
	rid := w.Header().Get("X-Request-Id")
	if !seen.called || !uuidV4.MatchString(rid) {
		t.Fatalf("answer %d, X-Request-Id %q", w.Code, rid)
	}
	if got := seen.header.Values("X-Request-Id"); len(got) != 1 || got[0] != rid || seen.requestID != rid {
		t.Fatalf("upstream header %v, variable %v; answer %q", got, seen.requestID, rid)
	}
	w2, _ := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken)
	if w2.Header().Get("X-Request-Id") == rid {
		t.Fatal("two requests got one id")
	}
	// A refusal carries one too.
	w3, seen3 := serveAuth(t, h)
	if seen3.called || w3.Code != http.StatusUnauthorized || !uuidV4.MatchString(w3.Header().Get("X-Request-Id")) {
		t.Fatalf("refusal %d, X-Request-Id %q", w3.Code, w3.Header().Get("X-Request-Id"))
	}
}

// The ids go into the access log entry of a server that writes one, and are
// not added for a server without access logs.
func TestAuthGuardLogFields(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		srv  *caddyhttp.Server
		want []string
	}{
		{"access logs", &caddyhttp.Server{Logs: &caddyhttp.ServerLogConfig{}}, []string{"request_id", "partner_id", "client_id"}},
		{"no access logs", &caddyhttp.Server{}, nil},
	} {
		r := httptest.NewRequest("GET", "/api/fulfilment/v4/shipments", nil)
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		extra := new(caddyhttp.ExtraLogFields)
		ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{})
		ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)
		ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, tc.srv)
		next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
		if err := h.ServeHTTP(httptest.NewRecorder(), r.WithContext(ctx), next); err != nil {
			t.Fatal(err)
		}
		keys := logFieldKeys(extra)
		if len(keys) != len(tc.want) {
			t.Fatalf("%s: log fields %v, want %v", tc.name, keys, tc.want)
		}
		for i := range keys {
			if keys[i] != tc.want[i] {
				t.Fatalf("%s: log fields %v, want %v", tc.name, keys, tc.want)
			}
		}
	}
}

// logFieldKeys returns the keys of the fields in e (Caddy has no getter;
// reading unexported fields through reflect is allowed).
func logFieldKeys(e *caddyhttp.ExtraLogFields) []string {
	fields := reflect.ValueOf(e).Elem().FieldByName("fields")
	var keys []string
	for i := range fields.Len() {
		keys = append(keys, fields.Index(i).FieldByName("Key").String())
	}
	return keys
}

// A handler after the guard that edits the request's request id header in
// place (as a header directive may) does not change the id the partner
// gets on the answer.
func TestAuthGuardRequestIDOfTheAnswerIsItsOwn(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	r := bearerRequest(t, a)
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		r.Header["X-Request-Id"][0] = "edited-upstream"
		return nil
	})
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatal(err)
	}
	if got := w.Header().Get("X-Request-Id"); !uuidV4.MatchString(got) {
		t.Fatalf("the answer's X-Request-Id is %q after an edit of the request's, want the guard's UUID", got)
	}
}

// The header values the guard sets are independent: a handler after it (a
// header directive) that edits one in place or appends to one leaves the
// others as the guard set them.
func TestAuthGuardHeaderValuesAreIndependent(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	r := bearerRequest(t, a)
	var upstreamID, upstreamPartner []string
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header()["X-Request-Id"][0] = "edited-on-the-answer"
		r.Header["X-Request-Id"] = append(r.Header["X-Request-Id"], "appended-upstream")
		upstreamID = r.Header["X-Request-Id"]
		upstreamPartner = r.Header["X-Partner-Id"]
		return nil
	})
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatal(err)
	}
	if len(upstreamID) != 2 || !uuidV4.MatchString(upstreamID[0]) || upstreamID[1] != "appended-upstream" {
		t.Errorf("upstream X-Request-Id %q; want the guard's id, then the appended value (the answer's edit must not reach it)", upstreamID)
	}
	if len(upstreamPartner) != 1 || upstreamPartner[0] != "partner-acme" {
		t.Errorf("upstream X-Partner-Id %q; want only %q (an append to another header must not reach it)", upstreamPartner, "partner-acme")
	}
	if got := w.Header()["X-Request-Id"]; len(got) != 1 || got[0] != "edited-on-the-answer" {
		t.Errorf("answer X-Request-Id %q; want only the edited value", got)
	}
}

// The guard takes whether its server writes an access log from the server
// Caddy provisions it in: provisioned in a server without one, it adds no
// fields to a request's entry; in a server with one, it adds them.
func TestAuthGuardKnowsItsServersAccessLogFromProvisioning(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	for _, tc := range []struct {
		name string
		srv  *caddyhttp.Server
		want int
	}{
		{"server without access log", &caddyhttp.Server{}, 0},
		{"server with access log", &caddyhttp.Server{Logs: &caddyhttp.ServerLogConfig{}}, 3},
	} {
		ctx := fulfilmenttest.ConfigContext(t)
		ctx.Context = context.WithValue(ctx.Context, caddyhttp.ServerCtxKey, tc.srv)
		h := new(AuthHandler)
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		h.app = a // the started app, which issued tok
		r := bearerRequest(t, a)
		extra := new(caddyhttp.ExtraLogFields)
		rctx := context.WithValue(r.Context(), caddyhttp.ExtraLogFieldsCtxKey, extra)
		next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
		if err := h.ServeHTTP(httptest.NewRecorder(), r.WithContext(rctx), next); err != nil {
			t.Fatal(err)
		}
		if got := logFieldKeys(extra); len(got) != tc.want {
			t.Errorf("%s: log fields %v, want %d", tc.name, got, tc.want)
		}
	}
}

// The variables the guard sets read as the documented placeholders, and
// Caddy's vars matcher matches them, as a Caddyfile uses them.
func TestAuthGuardVariablesReadAsPlaceholders(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	_, seen := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken)
	if !seen.called || seen.partner == "" {
		t.Fatalf("the guard did not pass a valid token on (called %v, partner %q)", seen.called, seen.partner)
	}
	if seen.partnerVar != seen.partner || seen.clientVar != tAcmeID {
		t.Errorf("{http.vars.fulfilment.partner_id} = %q, {http.vars.fulfilment.client_id} = %q; want %q and %q",
			seen.partnerVar, seen.clientVar, seen.partner, tAcmeID)
	}
	if !seen.partnerMatched || !seen.clientMatched {
		t.Errorf("the vars matcher matched partner_id %v, client_id %v; want both", seen.partnerMatched, seen.clientMatched)
	}
}
