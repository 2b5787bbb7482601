package tokenauth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// preparedRequest is a request as Caddy hands it to a handler: with its
// replacer, vars and extra log fields (caddyhttp.PrepareRequest).
func preparedRequest(authorization string) (*http.Request, *httptest.ResponseRecorder) {
	r := httptest.NewRequest(http.MethodGet, "/api/fulfilment/v4/shipments", nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	w := httptest.NewRecorder()
	return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil), w
}

// The guard's request id against Caddy's {http.request.uuid}, each on a
// fresh prepared request (the preparation is in both figures):
//
//	go test -run '^$' -bench RequestID -benchmem ./modules/fulfilhttp/tokenauth/
func BenchmarkRequestID(b *testing.B) {
	b.Run("guard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, _ := preparedRequest("")
			caddyhttp.SetVar(r.Context(), fulfilhttp.RequestIDVar, fulfilhttp.NewRequestID())
		}
	})
	b.Run("caddy-uuid-placeholder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, _ := preparedRequest("")
			repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
			if id, _ := repl.GetString("http.request.uuid"); len(id) != 36 {
				b.Fatalf("uuid %q", id)
			}
		}
	})
}

// The guard on a valid (cached) token against a request that only gets
// prepared, the difference being the guard's own cost:
//
//	go test -run '^$' -bench AuthGuard -benchmem ./modules/fulfilhttp/tokenauth/
func BenchmarkAuthGuard(b *testing.B) {
	a := startTokensApp(b, testTokensConfig())
	h, _ := newAuthHandler(b, a, &AuthHandler{})
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		b.Fatal(err)
	}
	bearer := "Bearer " + tok.AccessToken
	passed := 0
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { passed++; return nil })
	b.Run("prepare-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			preparedRequest(bearer)
		}
	})
	b.Run("guard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, w := preparedRequest(bearer)
			if err := h.ServeHTTP(w, r, next); err != nil {
				b.Fatal(err)
			}
		}
		if passed == 0 {
			b.Fatal("the guard refused the token")
		}
	})
}
