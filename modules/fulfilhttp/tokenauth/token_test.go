package tokenauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// tokenClient drives a TokenHandler with real requests and a log observer.
type tokenClient struct {
	t    testing.TB
	h    *TokenHandler
	logs *observer.ObservedLogs
}

func newTokenClient(t testing.TB, a *fulfilment.App) tokenClient {
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
	id, err := a.TokenService().Verify(g.AccessToken)
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

// wantThrottled checks a 429: Retry-After in whole seconds and the
// standard invalid_client error body.
func wantThrottled(t testing.TB, w *httptest.ResponseRecorder) {
	t.Helper()
	wantOAuthError(t, w, 429, "invalid_client")
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("429 with Retry-After %q, want a positive number of seconds", w.Header().Get("Retry-After"))
	}
}

func TestTokenEndpointThrottlesFailuresPerClientID(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &fulfilment.ThrottleConfig{ClientFailures: 3, AddressFailures: 100}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for i := range 3 {
		wantOAuthError(t, c.send("POST", fmt.Sprint("10.1.0.", i), nil, "Authorization", basicAuth(tAcmeID, "wrong-"+fmt.Sprint(i))), 401, "invalid_client")
	}
	wantThrottled(t, c.send("POST", "10.1.0.98", nil, "Authorization", basicAuth(tAcmeID, "wrong-again")))
	// The same body for a form request: 429 tells nothing the 401 did not.
	wantThrottled(t, c.send("POST", "10.1.0.98", formBody("grant_type", "client_credentials", "client_id", tAcmeID, "client_secret", "wrong"), "Content-Type", formType))
}

// Failures in a client's name never lock the client out: the right secret
// gets its token while wrong ones answer 429.
func TestTokenEndpointRightSecretPassesTheClientThrottle(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &fulfilment.ThrottleConfig{ClientFailures: 3, AddressFailures: 100}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for i := range 4 {
		c.send("POST", "10.1.0.1", nil, "Authorization", basicAuth(tAcmeID, "wrong-"+fmt.Sprint(i)))
	}
	wantThrottled(t, c.send("POST", "10.1.0.1", nil, "Authorization", basicAuth(tAcmeID, "wrong-5")))
	decodeTokenAnswer(t, c.send("POST", "10.1.0.1", nil, "Authorization", basicAuth(tAcmeID, tAcmeSecret)))
	decodeTokenAnswer(t, c.send("POST", "10.1.0.2", formBody("grant_type", "client_credentials", "client_id", tAcmeID, "client_secret", tAcmeSecret), "Content-Type", formType))
}

// Everyone behind one address (a NAT, a load balancer) keeps working while
// that address is throttled for guessing client ids.
func TestTokenEndpointRightSecretPassesTheAddressThrottle(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &fulfilment.ThrottleConfig{ClientFailures: 100, AddressFailures: 5}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for i := range 5 {
		wantOAuthError(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth(fmt.Sprint("guess-", i), "x")), 401, "invalid_client")
	}
	wantThrottled(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth("guess-5", "x")))
	wantThrottled(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth(tGlobexID, "wrong")))
	decodeTokenAnswer(t, c.send("POST", "10.2.0.1", nil, "Authorization", basicAuth(tGlobexID, tGlobexSecret)))
}

// Addresses of one IPv6 /64 share one failure budget.
func TestTokenEndpointThrottlesIPv6PerSlash64(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &fulfilment.ThrottleConfig{ClientFailures: 100, AddressFailures: 3}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for i := range 3 {
		wantOAuthError(t, c.send("POST", fmt.Sprintf("2001:db8:5:6::%x", i+1), nil, "Authorization", basicAuth(fmt.Sprint("guess-", i), "x")), 401, "invalid_client")
	}
	wantThrottled(t, c.send("POST", "2001:db8:5:6:ffff::9", nil, "Authorization", basicAuth("guess-9", "x")))
	wantOAuthError(t, c.send("POST", "2001:db8:5:7::1", nil, "Authorization", basicAuth("guess-10", "x")), 401, "invalid_client")
}

// Requests that are malformed (400) are answered as such and not counted.
func TestTokenEndpointDoesNotCountMalformedRequests(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Throttle = &fulfilment.ThrottleConfig{ClientFailures: 100, AddressFailures: 2}
	a := startTokensApp(t, cfg)
	c := newTokenClient(t, a)
	for range 5 {
		wantOAuthError(t, c.send("POST", "10.4.0.1", formBody("grant_type", "password", "client_id", tAcmeID, "client_secret", "x"), "Content-Type", formType), 400, "unsupported_grant_type")
	}
	wantOAuthError(t, c.send("POST", "10.4.0.1", nil, "Authorization", basicAuth("nobody", "x")), 401, "invalid_client")
}

// Two Authorization headers are refused (the guard refuses them too), not
// decided by whichever comes first.
func TestTokenEndpointRefusesTwoAuthorizationHeaders(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	c := newTokenClient(t, a)
	r := httptest.NewRequest("POST", "/api/auth/token", nil)
	r.Header.Add("Authorization", basicAuth(tAcmeID, tAcmeSecret))
	r.Header.Add("Authorization", basicAuth(tGlobexID, tGlobexSecret))
	w := httptest.NewRecorder()
	if err := c.h.ServeHTTP(w, r, nil); err != nil {
		t.Fatal(err)
	}
	wantOAuthError(t, w, 400, "invalid_request")
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

// A config whose app has no token service yet (provisioned, not started,
// and no other config holds its data dir) answers 503 at the token
// endpoint and the guard; neither panics nor passes the request on.
func TestHandlersWithoutATokenServiceAnswer503(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	b := &fulfilment.App{DataDir: t.TempDir(), Tokens: testTokensConfig()}
	t.Setenv("FULFILGATE_TEST_SIGNING_KEY", fulfilmenttest.SeedB64)
	if err := b.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if b.TokenService() != nil {
		t.Fatal("an app that never started has a token service")
	}
	th := &TokenHandler{app: b, logger: zap.NewNop()}
	r := httptest.NewRequest(http.MethodPost, "/api/auth/token", strings.NewReader("grant_type=client_credentials"))
	r.SetBasicAuth(tAcmeID, "whatever")
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	if err := th.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("token endpoint: %d %v %s, want 503", w.Code, err, w.Body)
	}
	ah, _ := newAuthHandler(t, b, &AuthHandler{})
	w, seen := serveAuth(t, ah, "Authorization", "Bearer x.y.z")
	if seen.called || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("guard: %d %s, want 503 and nothing passed on", w.Code, w.Body)
	}
}
