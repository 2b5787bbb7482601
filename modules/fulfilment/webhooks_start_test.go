package fulfilment

import (
	"context"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// A delivery is signed with the partner's key from the tokens part; after a
// reload the same dispatcher keeps running, signs with the new config's key
// and delivers with the new config's settings.
func TestWebhooksDeliveryAndReload(t *testing.T) {
	dir := t.TempDir()
	key1 := "first-webhook-key-0123456789abcdef0123456789"
	key2 := "second-webhook-key-0123456789abcdef012345678"
	hooks := `{"allow_http":true,"allow_networks":["127.0.0.0/8"],"standard_webhooks":true}`
	if err := caddy.Load(fulfilmentConfig(dir, key1, hooks), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, err := ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	svc := app.WebhookService()
	if svc == nil {
		t.Fatal("no webhook service after start")
	}
	url, got := hookSink(t)
	sub, _, err := svc.Subscriptions().Create(context.Background(), "acme", url+"/hook", webhooks.EventShipmentShipped)
	if err != nil {
		t.Fatal(err)
	}

	id, err := svc.SendTest(sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := waitHook(t, got)
	if want := `{"type":"shipment.shipped","resource":"shipment","identifier":"test"}`; string(h.body) != want {
		t.Fatalf("body %s, want %s", h.body, want)
	}
	if !webhooks.Verify([]byte(key1), h.body, h.header.Get("x-hook-signature")) {
		t.Fatalf("signature %q does not verify with the partner's key", h.header.Get("x-hook-signature"))
	}
	if h.header.Get("x-hook-id") != id || h.header.Get("x-hook-attempt") != "1" || h.header.Get("webhook-id") != id {
		t.Fatalf("headers %v, want x-hook-id and webhook-id %s", h.header, id)
	}
	if ua := h.header.Get("User-Agent"); ua != "Fulfilgate-Webhooks/"+Version() {
		t.Fatalf("User-Agent %q", ua)
	}

	// Reload with the partner's key rotated and other delivery settings:
	// the running dispatcher takes them.
	reloaded := `{"allow_http":true,"allow_networks":["127.0.0.0/8"],"workers":3,"max_attempts":7,
		"retry_period":"1h","user_agent":"Reloaded/1"}`
	if err := caddy.Load(fulfilmentConfig(dir, key2, reloaded), true); err != nil {
		t.Fatal(err)
	}
	app2, err := ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	if app2 == app {
		t.Fatal("reload did not load a new app")
	}
	if app2.WebhookService() != svc {
		t.Fatal("reload made a second webhook service for the same data dir")
	}
	if app.WebhookService() != svc {
		t.Fatal("the stopped config's handlers (draining) do not reach the running service")
	}
	if rp, o := svc.RetryPolicy(), svc.Settings(); rp.MaxAttempts != 7 || rp.Period != time.Hour ||
		o.Workers != 3 || o.StandardWebhooks || o.UserAgent != "Reloaded/1" {
		t.Fatalf("after the reload: retry %+v, workers %d, standard_webhooks %v, UA %q",
			rp, o.Workers, o.StandardWebhooks, o.UserAgent)
	}
	if _, err := svc.SendTest(sub.ID); err != nil {
		t.Fatal(err)
	}
	h = waitHook(t, got)
	if !webhooks.Verify([]byte(key2), h.body, h.header.Get("x-hook-signature")) {
		t.Fatal("after the reload the delivery is not signed with the new config's key")
	}
	if h.header.Get("webhook-id") != "" || h.header.Get("User-Agent") != "Reloaded/1" {
		t.Fatalf("after the reload (standard_webhooks off, new user_agent): headers %v", h.header)
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	if app.WebhookService() != nil || app2.WebhookService() != nil {
		t.Fatal("a webhook service is handed out after the data dir closed")
	}
}

func TestWebhookKeyOf(t *testing.T) {
	if err := caddy.Load(fulfilmentConfig(t.TempDir(), "a-webhook-key-of-enough-length-0123456789", `{}`), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, err := ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	if k, err := webhookKeyOf(app.TokenService(), "acme"); err != nil || string(k) != "a-webhook-key-of-enough-length-0123456789" {
		t.Fatalf("acme: %q %v", k, err)
	}
	if _, err := webhookKeyOf(app.TokenService(), "nobody"); err == nil {
		t.Fatal("an unknown partner has a key")
	}
}

// Webhook keys come from the data directory's token service, whose
// partners are those of the config in force: the new config's once it
// started, the running config's again when the new one's reload fails.
// Without a token service no key resolves.
func TestWebhookKeysComeFromTheTokensInForce(t *testing.T) {
	if _, err := (&webhookRuntime{st: &sharedState{services: map[string]any{}}}).webhookKey("acme"); err == nil {
		t.Fatal("a key resolved without a token service")
	}
	key1 := "first-webhook-key-0123456789abcdef0123456789"
	key2 := "second-webhook-key-0123456789abcdef012345678"
	running := runApp(t, &App{DataDir: t.TempDir(), Tokens: &TokensConfig{Partners: []PartnerConfig{{ID: "acme", WebhookKey: key1}}}})
	v, ok := running.current().existing("webhooks")
	if !ok {
		t.Fatal("no webhook runtime")
	}
	rt := v.(*webhookRuntime)
	if k, err := rt.webhookKey("acme"); err != nil || string(k) != key1 {
		t.Fatalf("running config: key %q %v, want its own", k, err)
	}
	ctx, cancel := newConfigContext(t)
	t.Cleanup(cancel)
	next := loadApp(t, ctx, &App{DataDir: running.DataDir, Tokens: &TokensConfig{Partners: []PartnerConfig{{ID: "acme", WebhookKey: key2}}}})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	if k, err := rt.webhookKey("acme"); err != nil || string(k) != key2 {
		t.Fatalf("after the new config started: key %q %v, want the new config's", k, err)
	}
	if err := next.Stop(); err != nil { // the new config's http app failed
		t.Fatal(err)
	}
	if k, err := rt.webhookKey("acme"); err != nil || string(k) != key1 {
		t.Fatalf("after the new config failed to start: key %q %v, want the running config's", k, err)
	}
}
