package fulfilment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/tokens"
)

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
	svc := a.TokenService()
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
	if b.TokenService() != svc {
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
	if a.TokenService() != svc {
		t.Fatal("a stopped config draining requests lost the shared token service")
	}
	if _, ok := a.partner("partner-globex"); ok {
		t.Fatal("a draining config answered with its own stale partners")
	}
	// Once no config holds the data dir, nothing is served.
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if a.TokenService() != nil || b.TokenService() != nil {
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
	k, err := webhookKeyOf(a.TokenService(), "partner-globex")
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
	if k2, err := webhookKeyOf(b.TokenService(), "partner-globex"); err != nil || string(k2) != string(k) {
		t.Fatalf("after reload: %q %v, want %q", k2, err, k)
	}
	if info, err := b.TokenService().PartnerInfo("partner-globex"); err != nil || info.WebhookKeySource != "generated" {
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
	if got := next.TokenService(); got == nil || got != running.TokenService() {
		t.Fatalf("a provisioned, not yet started config got token service %p, want the running %p", got, running.TokenService())
	}
}

// A config whose servers answer before its Start has configured the token
// service (Caddy starts apps in no set order) gets no token service (its
// handlers answer 503): it must not reach a service that is opened but not
// yet configured. (It used to panic on the missing throttle, and the client
// saw the connection drop.)
func TestTokenServiceNotConfiguredYetIsNotHandedOut(t *testing.T) {
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
	if b.TokenService() != nil {
		t.Fatal("an unconfigured service was handed out")
	}
}
