package tokenauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

func wantProblem(t testing.TB, w *httptest.ResponseRecorder, seen *upstreamSeen, status int, challenge string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if seen.called {
		t.Fatal("a refused request reached the next handler")
	}
	if w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("content type %q", w.Header().Get("Content-Type"))
	}
	var p fulfilhttp.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != status || p.Type == "" || p.Title == "" {
		t.Fatalf("problem body %s", w.Body)
	}
	if got := w.Header().Get("WWW-Authenticate"); got != challenge {
		t.Fatalf("WWW-Authenticate %q, want %q", got, challenge)
	}
}

const (
	chMissing = `Bearer realm="fulfilment"`
	chInvalid = `Bearer realm="fulfilment", error="invalid_token"`
	chExpired = `Bearer realm="fulfilment", error="invalid_token", error_description="The access token expired"`
)

func testClaims(a *fulfilment.App, exp time.Time) jwt.MapClaims {
	// The issuer, audience and secret version of acme's client, as the
	// service has them: read them from a genuine token.
	tok, _ := a.TokenService().Token(mustAuth(a))
	parsed, _, _ := jwt.NewParser().ParseUnverified(tok.AccessToken, jwt.MapClaims{})
	genuine := parsed.Claims.(jwt.MapClaims)
	return jwt.MapClaims{"iss": genuine["iss"], "aud": genuine["aud"], "sub": "partner-acme", "client_id": tAcmeID,
		"sv": genuine["sv"], "iat": exp.Add(-time.Hour).Unix(), "exp": exp.Unix(), "jti": "t1"}
}

func TestAuthGuard(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, logs := newAuthHandler(t, a, &AuthHandler{StripHeaders: []string{"X-Client-Id"}})
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}

	// Valid: passes on, Authorization and the partner-sent identity removed.
	w, seen := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken, "X-Partner-Id", "partner-globex",
		"X-Partner-Id", "evil", "X-Client-Id", "spoof")
	if w.Code != http.StatusTeapot || !seen.called {
		t.Fatalf("valid token: %d %s", w.Code, w.Body)
	}
	if seen.header.Get("Authorization") != "" || seen.header.Get("X-Client-Id") != "" {
		t.Fatalf("upstream saw %v", seen.header)
	}
	if v := seen.header.Values("X-Partner-Id"); len(v) != 1 || v[0] != "partner-acme" {
		t.Fatalf("identity header %v", v)
	}
	if seen.partner != "partner-acme" {
		t.Fatalf("partnerFromRequest %q", seen.partner)
	}

	// Missing, malformed, two headers.
	for _, hdr := range [][]string{nil, {"Authorization", "Basic abc"}, {"Authorization", "Bearer"},
		{"Authorization", "Bearer a b"}, {"Authorization", "Bearer " + tok.AccessToken, "Authorization", "Bearer " + tok.AccessToken}} {
		w, seen := serveAuth(t, h, hdr...)
		wantProblem(t, w, seen, 401, chMissing)
	}
	// Invalid.
	w, seen = serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken+"x")
	wantProblem(t, w, seen, 401, chInvalid)
	// Expired genuine token: 403.
	expired := signTestToken(t, testClaims(a, time.Now().Add(-time.Minute)))
	w, seen = serveAuth(t, h, "Authorization", "Bearer "+expired)
	wantProblem(t, w, seen, 403, chExpired)
	// Expired and tampered: 401.
	parts := strings.Split(expired, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	w, seen = serveAuth(t, h, "Authorization", "Bearer "+strings.Join(parts, "."))
	wantProblem(t, w, seen, 401, chInvalid)
	// Expired with a wrong audience: 401.
	c := testClaims(a, time.Now().Add(-time.Minute))
	c["aud"] = "other"
	w, seen = serveAuth(t, h, "Authorization", "Bearer "+signTestToken(t, c))
	wantProblem(t, w, seen, 401, chInvalid)

	for _, e := range logs.All() {
		if strings.Contains(e.Message+fmt.Sprint(e.ContextMap()), tok.AccessToken[20:60]) {
			t.Fatalf("log carries a token: %v", e.ContextMap())
		}
	}
}

func TestAuthGuardIdentityHeaderAndNotRunning(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{IdentityHeader: "x-wms-partner"})
	tok, _ := a.TokenService().Token(mustAuth(a))
	_, seen := serveAuth(t, h, "Authorization", "bearer "+tok.AccessToken, "X-Wms-Partner", "spoof", "X-Partner-Id", "kept")
	if seen.header.Get("X-Wms-Partner") != "partner-acme" || len(seen.header.Values("X-Wms-Partner")) != 1 {
		t.Fatalf("identity header: %v", seen.header)
	}
	if (&AuthHandler{IdentityHeader: "bad header"}).Validate() == nil {
		t.Fatal("bad header name accepted")
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	w, seen := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken)
	if w.Code != 503 || seen.called {
		t.Fatalf("stopped app: %d", w.Code)
	}
}
