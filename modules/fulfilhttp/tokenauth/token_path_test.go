package tokenauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// With a path of its own, the token endpoint answers exactly that path and
// passes every other request, near misses included, to the next handler
// (the guard, which refuses them without a Bearer token).
func TestTokenEndpointWithAPathPassesOtherPathsOn(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	c := newTokenClient(t, a)
	c.h.Path = "/api/auth/token"
	serve := func(target string) (answered bool, w *httptest.ResponseRecorder) {
		r := httptest.NewRequest(http.MethodPost, target, formBody("grant_type", "client_credentials"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Authorization", basicAuth(tAcmeID, tAcmeSecret))
		r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{}))
		w = httptest.NewRecorder()
		answered = true
		next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { answered = false; return nil })
		if err := c.h.ServeHTTP(w, r, next); err != nil {
			t.Fatalf("%s: handler error %v", target, err)
		}
		return answered, w
	}
	if answered, w := serve("/api/auth/token"); !answered || decodeTokenAnswer(t, w).AccessToken == "" {
		t.Fatalf("POST /api/auth/token: answered %v, %d %s; want a token", answered, w.Code, w.Body)
	}
	for _, target := range []string{"/api/auth/token/", "/API/auth/token", "/api/auth//token", "/api/auth/tokens", "/api/fulfilment/v4/products", "/"} {
		if answered, w := serve(target); answered {
			t.Errorf("POST %s: answered %d %s by the token endpoint; want it passed to the next handler", target, w.Code, w.Body)
		}
	}
}

// The path option: one absolute, clean path, given once.
func TestTokenCaddyfilePath(t *testing.T) {
	h := new(TokenHandler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("fulfilment_token {\n path /api/auth/token\n read_timeout 5s\n}")); err != nil {
		t.Fatal(err)
	}
	if h.Path != "/api/auth/token" || h.Validate() != nil || !h.AnswersOnlyItsPath() {
		t.Fatalf("parsed %+v (validate: %v); want path /api/auth/token", h, h.Validate())
	}
	for src, want := range map[string]string{
		"fulfilment_token {\n path /a\n path /b\n}": "given twice",
		"fulfilment_token {\n path\n}":              "argument",
		"fulfilment_token {\n base /a\n}":           "unknown fulfilment_token option",
	} {
		err := new(TokenHandler).UnmarshalCaddyfile(caddyfile.NewTestDispenser(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", src, err, want)
		}
	}
	for _, p := range []string{"api/auth/token", "/api/auth/token/", "/api//token", "/api/./token", "/api/x/../token"} {
		if err := (&TokenHandler{Path: p}).Validate(); err == nil {
			t.Errorf("path %q accepted; want it refused (not absolute and clean)", p)
		}
	}
	if (&TokenHandler{}).AnswersOnlyItsPath() {
		t.Error("a token endpoint without a path claims to pass other paths on")
	}
}
