package caddymodule

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// tokenClient drives a TokenHandler with real requests and a log observer.
type tokenClient struct {
	t    testing.TB
	h    *TokenHandler
	logs *observer.ObservedLogs
}

func newTokenClient(t testing.TB, a *App) tokenClient {
	core, logs := observer.New(zapcore.DebugLevel)
	return tokenClient{t, &TokenHandler{app: a, logger: zap.New(core)}, logs}
}

// post sends a token request from addr with the given headers.
func (c tokenClient) send(method, addr string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	c.t.Helper()
	r := httptest.NewRequest(method, "/api/auth/token", body)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	vars := map[string]any{caddyhttp.ClientIPVarKey: addr}
	r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, vars))
	w := httptest.NewRecorder()
	if err := c.h.ServeHTTP(w, r, nil); err != nil {
		c.t.Fatalf("handler error %v", err)
	}
	return w
}

func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func formBody(kv ...string) io.Reader {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return strings.NewReader(v.Encode())
}

const formType = "application/x-www-form-urlencoded"

func decodeTokenAnswer(t testing.TB, w *httptest.ResponseRecorder) tokenResponse {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Pragma") != "no-cache" ||
		w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", w.Header())
	}
	var tr tokenResponse
	if err := json.Unmarshal(w.Body.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.TokenType != "Bearer" || tr.AccessToken == "" || tr.ExpiresIn < 1800 || tr.ExpiresIn > 3600 {
		t.Fatalf("answer %+v", tr)
	}
	return tr
}

func wantOAuthError(t testing.TB, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	var e oauthError
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error != code {
		t.Fatalf("body %s, want error %s", w.Body, code)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("error answer without Cache-Control: no-store")
	}
}

func TestTokenEndpointBothForms(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	c := newTokenClient(t, a)
	basic := decodeTokenAnswer(t, c.send("POST", "127.0.0.1", nil, "Authorization", basicAuth(tAcmeID, tAcmeSecret)))
	basic2 := decodeTokenAnswer(t, c.send("POST", "127.0.0.1", strings.NewReader("grant_type=client_credentials"),
		"Authorization", basicAuth(tAcmeID, tAcmeSecret), "Content-Type", formType))
	form := decodeTokenAnswer(t, c.send("POST", "127.0.0.1", formBody("grant_type", "client_credentials",
		"client_id", tAcmeID, "client_secret", tAcmeSecret), "Content-Type", formType))
	if basic.AccessToken != basic2.AccessToken || basic.AccessToken != form.AccessToken {
		t.Fatal("the same client got different tokens within the reuse window")
	}
	g := decodeTokenAnswer(t, c.send("POST", "127.0.0.1", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret)))
	if g.AccessToken == basic.AccessToken {
		t.Fatal("two partners share a token")
	}
	id, err := a.tokenService().Verify(g.AccessToken)
	if err != nil || id.PartnerID != "partner-globex" {
		t.Fatalf("globex token: %+v %v", id, err)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	c := newTokenClient(t, a)

	w := c.send("GET", "10.0.0.1", nil)
	wantOAuthError(t, w, 405, "invalid_request")
	if w.Header().Get("Allow") != "POST" {
		t.Fatal("405 without Allow: POST")
	}
	big := strings.Repeat("a", 8<<10+1)
	wantOAuthError(t, c.send("POST", "10.0.0.1", strings.NewReader(big), "Content-Type", formType), 413, "invalid_request")
	// Without Content-Length (chunked): the limit still holds.
	wantOAuthError(t, c.send("POST", "10.0.0.1", io.MultiReader(strings.NewReader(big)), "Content-Type", formType), 413, "invalid_request")

	wantOAuthError(t, c.send("POST", "10.0.0.1", formBody("grant_type", "client_credentials", "client_id", tAcmeID, "client_secret", tAcmeSecret),
		"Content-Type", formType, "Authorization", basicAuth(tAcmeID, tAcmeSecret)), 400, "invalid_request")
	wantOAuthError(t, c.send("POST", "10.0.0.1", formBody("client_id", tAcmeID, "client_secret", tAcmeSecret), "Content-Type", formType), 400, "invalid_request")
	wantOAuthError(t, c.send("POST", "10.0.0.1", formBody("grant_type", "password", "client_id", tAcmeID, "client_secret", tAcmeSecret), "Content-Type", formType), 400, "unsupported_grant_type")

	// Wrong secret, Basic: 401 with the Basic challenge.
	w = c.send("POST", "10.0.0.2", nil, "Authorization", basicAuth(tAcmeID, tGlobexSecret))
	wantOAuthError(t, w, 401, "invalid_client")
	if w.Header().Get("WWW-Authenticate") != `Basic realm="fulfilment"` {
		t.Fatalf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
	}
	// Unknown client, form: the same answer body, no challenge.
	w2 := c.send("POST", "10.0.0.3", formBody("grant_type", "client_credentials", "client_id", "nobody", "client_secret", tAcmeSecret), "Content-Type", formType)
	wantOAuthError(t, w2, 401, "invalid_client")
	if w2.Header().Get("WWW-Authenticate") != "" {
		t.Fatal("form failure carries a Basic challenge")
	}
	if w.Body.String() != w2.Body.String() {
		t.Fatalf("answers tell which part was wrong: %s vs %s", w.Body, w2.Body)
	}
	// Neither form.
	wantOAuthError(t, c.send("POST", "10.0.0.4", nil), 401, "invalid_client")
}

func TestTokenEndpointThrottle(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &ThrottleConfig{ClientFailures: 3, AddressFailures: 5}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for i := 0; i < 3; i++ {
		wantOAuthError(t, c.send("POST", fmt.Sprint("10.1.0.", i), nil, "Authorization", basicAuth(tAcmeID, "wrong-"+fmt.Sprint(i))), 401, "invalid_client")
	}
	// The client id is now throttled, even with the right secret, from anywhere.
	w := c.send("POST", "10.1.0.99", nil, "Authorization", basicAuth(tAcmeID, tAcmeSecret))
	wantOAuthError(t, w, 429, "slow_down")
	if ra := w.Header().Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("429 without Retry-After: %q", ra)
	}
	// Another client is not.
	decodeTokenAnswer(t, c.send("POST", "10.1.0.99", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret)))
	// One address guessing client ids is throttled by address.
	for i := 0; i < 5; i++ {
		wantOAuthError(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth(fmt.Sprint("guess-", i), "x")), 401, "invalid_client")
	}
	wantOAuthError(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret)), 429, "slow_down")
	decodeTokenAnswer(t, c.send("POST", "10.2.0.2", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret)))
}

// No log line, at any level, ever carries a client secret or a token.
func TestTokenEndpointNeverLogsSecrets(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	c := newTokenClient(t, a)
	wrong := "wrong-secret-that-must-not-be-logged-0123456789"
	var issued []string
	for i := 0; i < 3; i++ {
		c.send("POST", "10.3.0.1", nil, "Authorization", basicAuth(tAcmeID, wrong))
		c.send("POST", "10.3.0.1", formBody("grant_type", "client_credentials", "client_id", tAcmeID, "client_secret", wrong), "Content-Type", formType)
		c.send("POST", "10.3.0.1", formBody("grant_type", "client_credentials", "client_id", tAcmeID, "client_secret", wrong),
			"Content-Type", formType, "Authorization", basicAuth(tAcmeID, tAcmeSecret))
		issued = append(issued, decodeTokenAnswer(t, c.send("POST", "10.3.0.2", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret))).AccessToken)
	}
	if c.logs.Len() == 0 {
		t.Fatal("nothing logged: the test would prove nothing")
	}
	for _, e := range c.logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		for _, s := range append([]string{wrong, tAcmeSecret, tGlobexSecret, url.QueryEscape(wrong)}, issued...) {
			if strings.Contains(line, s) {
				t.Fatalf("log line carries a secret or token: %s", line)
			}
		}
	}
}

func TestTokenEndpointNotRunning(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	c := newTokenClient(t, a)
	wantOAuthError(t, c.send("POST", "10.0.0.1", nil, "Authorization", basicAuth(tAcmeID, tAcmeSecret)), 503, "temporarily_unavailable")
}
