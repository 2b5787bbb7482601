package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// A reload whose settings the running dispatcher refuses fails to load with
// a clear message; the running config and its settings stay.
func TestWebhooksReloadRefusedKeepsSettings(t *testing.T) {
	dir := t.TempDir()
	key := "a-webhook-key-of-enough-length-0123456789"
	if err := caddy.Load(fulfilmentConfig(dir, key, `{"max_attempts":9,"user_agent":"Old/1"}`), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, _, err := runningApp()
	if err != nil {
		t.Fatal(err)
	}
	svc := app.webhookService()
	// A control character passes the block's checks but not the service's.
	err = caddy.Load(fulfilmentConfig(dir, key, `{"max_attempts":2,"user_agent":"bad\u0001agent"}`), true)
	if err == nil || !strings.Contains(err.Error(), "applying the new webhooks settings") ||
		!strings.Contains(err.Error(), "UserAgent") {
		t.Fatalf("reload error: %v", err)
	}
	now, _, err := runningApp()
	if err != nil || now != app || now.webhookService() != svc {
		t.Fatalf("the running config changed: %v", err)
	}
	if o := svc.Settings(); o.MaxAttempts != 9 || o.UserAgent != "Old/1" {
		t.Fatalf("settings changed by a refused reload: max_attempts %d, UA %q", o.MaxAttempts, o.UserAgent)
	}
}

// When a config whose settings were applied is unloaded without ever
// running (its Start failed later), the running config's settings come
// back; a config replaced by a successful reload changes nothing.
func TestWebhookRuntimeRevert(t *testing.T) {
	db := openTestDB(t)
	st := &sharedState{Stores: badgerStores{badgerstore.New(db)}}
	cfgOf := func(maxAttempts int) *WebhooksConfig {
		c, err := (&WebhooksConfig{MaxAttempts: maxAttempts}).withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := &App{Webhooks: cfgOf(50), logger: zap.NewNop()}
	old.state.Store(st)
	rt := &webhookRuntime{st: st, settings: old.Webhooks.settings()}
	svc, err := webhooks.New(rt.options(rt.settings, zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	rt.svc = svc
	apply := func(to *App) error { return rt.apply(to.Webhooks.settings(), zap.NewNop()) }
	st.startedOn(old)
	if err := st.applyFor(old, "webhooks", apply); err != nil {
		t.Fatal(err)
	}

	failed := &App{Webhooks: cfgOf(2), logger: zap.NewNop()}
	st.startedOn(failed) // its Start failed later: it never gets a state
	if err := st.applyFor(failed, "webhooks", apply); err != nil {
		t.Fatal(err)
	}
	if svc.RetryPolicy().MaxAttempts != 2 {
		t.Fatal("settings not applied")
	}
	st.restoreFrom(old) // not the one in force: nothing happens
	if svc.RetryPolicy().MaxAttempts != 2 {
		t.Fatal("unloading a replaced config changed the settings")
	}
	st.restoreFrom(failed)
	if svc.RetryPolicy().MaxAttempts != 50 || st.inForce["webhooks"] != old {
		t.Fatalf("after the failed config's unload: max_attempts %d", svc.RetryPolicy().MaxAttempts)
	}

	old.state.Store(nil) // shutting down: nothing runs, nothing to restore
	st.inForce["webhooks"] = failed
	st.restoreFrom(failed)
	if svc.RetryPolicy().MaxAttempts != 50 {
		t.Fatal("a revert with nothing running changed the settings")
	}
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
