package caddymodule

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// Demo credentials of the unit tests (never used outside tests).
const (
	tAcmeID       = "acme-test-client"
	tAcmeSecret   = "acme-test-secret-dhSU5KMB7ZvpCURxnF3qm8Xj4RhBV5cH2vCGL2hB-q4"
	tGlobexID     = "globex-test-client"
	tGlobexSecret = "globex-test-secret-f7f612IgL4nYt82Hd2EdMoLQsiqB5qAvY9e6aj1uBmM"
	tSeedB64      = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // 32-byte Ed25519 seed 0..31
)

func testTokensConfig() *TokensConfig {
	return &TokensConfig{
		SigningKeys: []SigningKeyConfig{{KID: "test-1", Alg: "EdDSA", Key: "{env.FULFILGATE_TEST_SIGNING_KEY}"}},
		Partners: []PartnerConfig{
			{ID: "partner-acme", Consolidation: true, WebhookKey: "acme-test-webhook-key-0123456789abcdef",
				Clients: []ClientConfig{{ID: tAcmeID, Secret: tAcmeSecret}}},
			{ID: "partner-globex", WebhookKey: "globex-test-webhook-key-0123456789abcde",
				Clients: []ClientConfig{{ID: tGlobexID, Secret: tGlobexSecret}}},
		},
	}
}

// startTokensApp provisions and starts a real fulfilment app (Badger in a
// temporary dir) with the given tokens block.
func startTokensApp(t testing.TB, cfg *TokensConfig) *App {
	t.Helper()
	t.Setenv("FULFILGATE_TEST_SIGNING_KEY", tSeedB64)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	a := &App{DataDir: t.TempDir(), Tokens: cfg}
	if err := a.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})
	return a
}

// testSigner returns the Ed25519 key behind tSeedB64.
func testSigner(t testing.TB) ed25519.PrivateKey {
	seed, err := base64.StdEncoding.DecodeString(tSeedB64)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// signTestToken signs claims with the configured test key.
func signTestToken(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tk := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tk.Header["typ"] = "at+jwt"
	tk.Header["kid"] = "test-1"
	s, err := tk.SignedString(testSigner(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokensProvisionErrors(t *testing.T) {
	cases := map[string]*TokensConfig{
		"lifetime too long":  {Lifetime: caddy.Duration(2 * time.Hour)},
		"lifetime too short": {Lifetime: caddy.Duration(10 * time.Minute)},
		"leeway too long":    {Leeway: caddy.Duration(2 * time.Minute)},
		"unknown algorithm":  {Algorithm: "none"},
		"unset env key":      {SigningKeys: []SigningKeyConfig{{KID: "k", Alg: "EdDSA", Key: "{env.FULFILGATE_TEST_UNSET_VAR}"}}},
		"short secret":       {Partners: []PartnerConfig{{ID: "p", Clients: []ClientConfig{{ID: "c", Secret: "short"}}}}},
		"bad partner id":     {Partners: []PartnerConfig{{ID: "a/b"}}},
		"short webhook key":  {Partners: []PartnerConfig{{ID: "p", WebhookKey: strings.Repeat("k", 31)}}},
	}
	for name, cfg := range cases {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		a := &App{DataDir: t.TempDir(), Tokens: cfg}
		err := a.Provision(ctx)
		cancel()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "tokens") {
			t.Errorf("%s: error does not name the tokens block: %v", name, err)
		}
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	a := &App{DataDir: t.TempDir(), Tokens: &TokensConfig{Lifetime: caddy.Duration(2 * time.Hour)}}
	if err := a.Provision(ctx); !strings.Contains(err.Error(), "1800") {
		t.Fatalf("lifetime error does not say the range: %v", err)
	}
}

func TestAppPartnerAndRestartKeepsService(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	p, ok := a.partner("partner-acme")
	if !ok || !p.Consolidation || string(p.WebhookKey) != "acme-test-webhook-key-0123456789abcdef" {
		t.Fatalf("partner-acme: %+v %v", p, ok)
	}
	if g, ok := a.partner("partner-globex"); !ok || g.Consolidation {
		t.Fatalf("partner-globex: %+v %v", g, ok)
	}
	if _, ok := a.partner("nobody"); ok {
		t.Fatal("unknown partner found")
	}
	svc := a.tokenService()
	// A second config on the same data dir (as a reload does) shares the
	// same service and applies its own settings.
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	cfg := testTokensConfig()
	cfg.Partners = cfg.Partners[:1]
	b := &App{DataDir: a.DataDir, Tokens: cfg}
	if err := b.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if b.tokenService() != svc {
		t.Fatal("reload made a second token service")
	}
	if _, ok := b.partner("partner-globex"); ok {
		t.Fatal("removed static partner still present after reload")
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	// The old config's server may still be draining requests after its app
	// stopped: it reaches the one service, with the newer config's settings.
	if a.tokenService() != svc {
		t.Fatal("a stopped config draining requests lost the shared token service")
	}
	if _, ok := a.partner("partner-globex"); ok {
		t.Fatal("a draining config answered with its own stale partners")
	}
	// Once no config holds the data dir, nothing is served.
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if a.tokenService() != nil || b.tokenService() != nil {
		t.Fatal("a token service is served after every config stopped")
	}
	if _, ok := a.partner("partner-acme"); ok {
		t.Fatal("stopped app still answers partner()")
	}
}

// A static partner without webhook_key has a generated key for the webhook
// glue (webhookKeyOf), the same after a reload and a restart of the app.
func TestStaticPartnerGeneratedWebhookKey(t *testing.T) {
	cfg := testTokensConfig()
	cfg.Partners[1].WebhookKey = ""
	a := startTokensApp(t, cfg)
	k, err := a.webhookKeyOf("partner-globex")
	if err != nil || len(k) < 43 {
		t.Fatalf("generated key: %q %v", k, err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	b := &App{DataDir: a.DataDir, Tokens: testTokensConfig()}
	b.Tokens.Partners[1].WebhookKey = ""
	if err := b.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if k2, err := b.webhookKeyOf("partner-globex"); err != nil || string(k2) != string(k) {
		t.Fatalf("after reload: %q %v, want %q", k2, err, k)
	}
	if info, err := b.tokenService().PartnerInfo("partner-globex"); err != nil || info.WebhookKeySource != "generated" {
		t.Fatalf("info %+v %v", info, err)
	}
}

// During a reload the new config's server can serve before its app has
// started: it must reach the token service the running config started, not
// answer 503.
func TestTokenServiceBeforeThisConfigStarted(t *testing.T) {
	running := startTokensApp(t, testTokensConfig())
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	next := &App{DataDir: running.DataDir, Tokens: testTokensConfig()}
	if err := next.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if got := next.tokenService(); got == nil || got != running.tokenService() {
		t.Fatalf("a provisioned, not yet started config got token service %p, want the running %p", got, running.tokenService())
	}
}

// A config whose servers answer before its Start has configured the token
// service (Caddy starts apps in no set order) answers 503: it must not
// reach a service that is opened but not yet configured. (It used to
// panic on the missing throttle, and the client saw the connection drop.)
func TestTokenServiceNotConfiguredYetIs503(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	st := pooledState(a.DataDir)
	half, err := tokens.Open(tokens.Options{Store: st.Stores.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	running := st.services["tokens"]
	st.services["tokens"] = half // as between Open and Configure in startTokens
	st.mu.Unlock()
	t.Cleanup(func() {
		st.mu.Lock()
		st.services["tokens"] = running
		st.mu.Unlock()
	})

	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	b := &App{DataDir: a.DataDir, Tokens: testTokensConfig()}
	if err := b.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if b.tokenService() != nil {
		t.Fatal("an unconfigured service was handed out")
	}
	th := &TokenHandler{app: b, logger: zap.NewNop()}
	r := httptest.NewRequest(http.MethodPost, "/api/auth/token", strings.NewReader("grant_type=client_credentials"))
	r.SetBasicAuth(tAcmeID, "whatever")
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	if err := th.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("token endpoint: %d %v %s", w.Code, err, w.Body)
	}
	ah, _ := newAuthHandler(t, b, &AuthHandler{})
	w, seen := serveAuth(t, ah, "Authorization", "Bearer x.y.z")
	if seen.called || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("guard: %d %s", w.Code, w.Body)
	}
}
