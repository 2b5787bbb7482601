// Package fulfilmenttest holds what the tests of the gateway's handler and
// admin packages share: a real fulfilment app (Badger in a temporary
// directory) with demo partners, and requests as the Bearer guard passes
// them on. It is imported by tests only.
package fulfilmenttest

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// Demo credentials of the unit tests (never used outside tests).
const (
	AcmeID       = "acme-test-client"
	AcmeSecret   = "acme-test-secret-dhSU5KMB7ZvpCURxnF3qm8Xj4RhBV5cH2vCGL2hB-q4"
	GlobexID     = "globex-test-client"
	GlobexSecret = "globex-test-secret-f7f612IgL4nYt82Hd2EdMoLQsiqB5qAvY9e6aj1uBmM"
	SeedB64      = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // 32-byte Ed25519 seed 0..31
)

// signingKeyEnv holds SeedB64 while a test runs: the configuration names
// the key by placeholder, as a production one should.
const signingKeyEnv = "FULFILGATE_TEST_SIGNING_KEY"

// TokensConfig is a tokens block with the signing key SeedB64 (kid test-1)
// and two static partners: partner-acme (consolidation, client AcmeID) and
// partner-globex (client GlobexID).
func TokensConfig() *fulfilment.TokensConfig {
	return &fulfilment.TokensConfig{
		SigningKeys: []fulfilment.SigningKeyConfig{{KID: "test-1", Alg: "EdDSA", Key: "{env." + signingKeyEnv + "}"}},
		Partners: []fulfilment.PartnerConfig{
			{ID: "partner-acme", Consolidation: true, WebhookKey: "acme-test-webhook-key-0123456789abcdef",
				Clients: []fulfilment.ClientConfig{{ID: AcmeID, Secret: AcmeSecret}}},
			{ID: "partner-globex", WebhookKey: "globex-test-webhook-key-0123456789abcde",
				Clients: []fulfilment.ClientConfig{{ID: GlobexID, Secret: GlobexSecret}}},
		},
	}
}

// StartTokensApp provisions and starts a real fulfilment app (Badger in a
// temporary dir) with the given tokens block.
func StartTokensApp(t testing.TB, cfg *fulfilment.TokensConfig) *fulfilment.App {
	t.Helper()
	return StartApp(t, &fulfilment.App{DataDir: t.TempDir(), Tokens: cfg})
}

// StartWebhooksApp provisions and starts a real fulfilment app (Badger in
// a temporary dir) with the given webhooks block.
func StartWebhooksApp(t testing.TB, cfg *fulfilment.WebhooksConfig) *fulfilment.App {
	t.Helper()
	return StartApp(t, &fulfilment.App{DataDir: t.TempDir(), Webhooks: cfg})
}

// StartApp provisions and starts a, and stops it when the test ends. The
// signing key of TokensConfig is in the environment meanwhile.
func StartApp(t testing.TB, a *fulfilment.App) *fulfilment.App {
	t.Helper()
	t.Setenv(signingKeyEnv, SeedB64)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
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

// LoopbackHooks is a webhooks block that accepts http://127.0.0.1 targets.
func LoopbackHooks() *fulfilment.WebhooksConfig {
	return &fulfilment.WebhooksConfig{AllowHTTP: true,
		AllowNetworks: []fulfilment.AllowNetwork{{Networks: []string{"127.0.0.0/8"}}}}
}

// Signer returns the Ed25519 key behind SeedB64.
func Signer(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	seed, err := base64.StdEncoding.DecodeString(SeedB64)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// SignToken signs claims as an access token with the key of TokensConfig.
func SignToken(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tk := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tk.Header["typ"] = "at+jwt"
	tk.Header["kid"] = "test-1"
	s, err := tk.SignedString(Signer(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// GuardHeaders are the default header names of the Bearer guard.
func GuardHeaders() *fulfilhttp.IdentityHeaders {
	return &fulfilhttp.IdentityHeaders{Identity: "X-Partner-Id", Protected: []string{"X-Partner-Id", "X-Request-Id"}}
}

// WithVerifiedPartner returns r as the Bearer guard (with its default
// header names) passes it on for partner (no identity if partner is empty):
// with Caddy's vars in its context.
func WithVerifiedPartner(r *http.Request, partner string) *http.Request {
	vars := map[string]any{}
	if partner != "" {
		id := GuardHeaders().Verified(partner)
		vars[fulfilhttp.PartnerIDVar] = &id
	}
	return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, vars))
}

// ConfigContext returns a context of a loaded configuration that has only
// the fulfilment app (data dir in a temporary dir; nothing opened), as a
// handler's Provision gets one.
func ConfigContext(t testing.TB) caddy.Context {
	t.Helper()
	apps := caddy.ModuleMap{"fulfilment": caddyconfig.JSON(&fulfilment.App{DataDir: t.TempDir()}, nil)}
	base, err := caddy.ProvisionContext(&caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}, AppsRaw: apps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(base)
	t.Cleanup(cancel)
	return ctx
}
