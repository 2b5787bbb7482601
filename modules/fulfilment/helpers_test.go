package fulfilment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
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

type gotHook struct {
	header http.Header
	body   []byte
}

// hookSink is a real receiver on 127.0.0.1 that answers 204 and hands every
// request to the test.
func hookSink(t *testing.T) (string, <-chan gotHook) {
	ch := make(chan gotHook, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- gotHook{r.Header.Clone(), b}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func fulfilmentConfig(dir, key, webhooksJSON string) []byte {
	return fmt.Appendf(nil, `{"admin":{"disabled":true},"apps":{"fulfilment":{"data_dir":%q,
		"tokens":{"partners":[{"id":"acme","webhook_key":%q}]},"webhooks":%s}}}`, dir, key, webhooksJSON)
}

func waitHook(t *testing.T, ch <-chan gotHook) gotHook {
	t.Helper()
	select {
	case h := <-ch:
		return h
	case <-time.After(15 * time.Second):
		t.Fatal("no delivery within 15s")
	}
	return gotHook{}
}

// openTestDB opens a real Badger in a temporary directory with the app's
// settings.
func openTestDB(t *testing.T) *badger.DB {
	t.Helper()
	dir := t.TempDir()
	db, err := datadir.Open(dir, badgerOptions(dir, zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pushApp is a fulfilment app with a push-only feed "push", loopback
// webhooks and two static partners, cons (consolidation) and plain.
func pushApp(t *testing.T) *App {
	return &App{
		DataDir:  t.TempDir(),
		Webhooks: &WebhooksConfig{AllowHTTP: true, AllowNetworks: []AllowNetwork{{Networks: []string{"127.0.0.0/8"}}}},
		Tokens: &TokensConfig{Partners: []PartnerConfig{
			{ID: "cons", Consolidation: true, WebhookKey: strings.Repeat("k", 32)},
			{ID: "plain", WebhookKey: strings.Repeat("q", 32)},
		}},
		Feeds: []*FeedConfig{{Name: "push"}},
	}
}

// runApp runs a as the fulfilment app of a real Caddy config (admin
// endpoint disabled), which Caddy then takes as its running config, and
// returns the running app. The config stops when the test ends.
func runApp(t *testing.T, a *App) *App {
	t.Helper()
	t.Setenv("FULFILGATE_TEST_SIGNING_KEY", tSeedB64)
	cfg, err := json.Marshal(caddy.Config{Admin: &caddy.AdminConfig{Disabled: true},
		AppsRaw: caddy.ModuleMap{"fulfilment": caddyconfig.JSON(a, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	running, err := ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	return running
}

// newConfigContext returns the context of a new config (not run by Caddy)
// and its cancel, which calls the Cleanup of the modules loaded in it.
func newConfigContext(t *testing.T) (caddy.Context, context.CancelFunc) {
	t.Helper()
	base, err := caddy.ProvisionContext(&caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return caddy.NewContext(base)
}

// loadApp provisions a in ctx (from newConfigContext) as Caddy loads an
// app, so that cancelling ctx calls its Cleanup, and returns the loaded
// app; it is not started.
func loadApp(t *testing.T, ctx caddy.Context, a *App) *App {
	t.Helper()
	t.Setenv("FULFILGATE_TEST_SIGNING_KEY", tSeedB64)
	v, err := ctx.LoadModuleByID("fulfilment", caddyconfig.JSON(a, nil))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*App)
}

// partner returns the partner with id from memory (static or dynamic);
// false when there is none or the app is not running.
func (a *App) partner(id string) (tokens.Partner, bool) {
	svc := a.TokenService()
	if svc == nil {
		return tokens.Partner{}, false
	}
	return svc.Partner(id)
}

// provisioned returns the context of configJSON, provisioned (nothing
// listens).
func provisioned(t *testing.T, configJSON string) caddy.Context {
	t.Helper()
	var cfg caddy.Config
	if err := json.Unmarshal([]byte(configJSON), &cfg); err != nil {
		t.Fatal(err)
	}
	ctx, err := caddy.ProvisionContext(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}
