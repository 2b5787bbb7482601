package fulfilment

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// part is a shared part whose settings are the name of the config that
// applied them.
type part struct {
	mu   sync.Mutex
	name string
}

func (p *part) set(v string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name = v
	return nil
}

func (p *part) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.name
}

// A config whose settings were applied but which never became the running
// one (a later part of the reload failed) gives the part back to the
// running config; a config replaced by a successful reload, or the last
// one stopping, leaves the settings alone.
func TestInForceRestoredWhenAReloadFails(t *testing.T) {
	st := &sharedState{}
	p := &part{}
	names := map[*App]string{}
	newApp := func(name string) *App {
		a := &App{logger: zap.NewNop()}
		names[a] = name
		return a
	}
	apply := func(a *App) error {
		return st.applyFor(a, "part", func(to *App) error { return p.set(names[to]) })
	}

	old := newApp("old")
	if err := apply(old); err != nil {
		t.Fatal(err)
	}
	old.state.Store(st) // running

	failed := newApp("failed")
	if err := apply(failed); err != nil {
		t.Fatal(err)
	}
	if p.get() != "failed" {
		t.Fatal("settings not applied")
	}
	st.restoreFrom(failed, old) // its reload failed: Caddy runs old
	if p.get() != "old" || st.inForce["part"] != old {
		t.Fatalf("after the failed reload the part runs %q's settings", p.get())
	}

	next := newApp("next")
	if err := apply(next); err != nil {
		t.Fatal(err)
	}
	next.state.Store(st)
	old.state.Store(nil)
	st.restoreFrom(old, next) // replaced by a successful reload
	if p.get() != "next" {
		t.Fatalf("stopping the replaced config put back %q's settings", p.get())
	}
	next.state.Store(nil)
	st.restoreFrom(next, nil) // shutting down: nothing runs
	if p.get() != "next" {
		t.Fatalf("shutting down put back %q's settings", p.get())
	}
}

// An apply that fails half-way puts the running config's settings back at
// once, and the failed config is not the one in force.
func TestInForceRestoredWhenApplyFails(t *testing.T) {
	st := &sharedState{}
	p := &part{}
	old := &App{logger: zap.NewNop()}
	old.state.Store(st)
	if err := st.applyFor(old, "part", func(*App) error { return p.set("old") }); err != nil {
		t.Fatal(err)
	}
	bad := &App{logger: zap.NewNop()}
	err := st.applyFor(bad, "part", func(to *App) error {
		switch to {
		case bad:
			_ = p.set("half of bad")
			return errors.New("second feed refused")
		case old:
			return p.set("old")
		}
		return fmt.Errorf("restored to the wrong config")
	})
	if err == nil || p.get() != "old" || st.inForce["part"] != old {
		t.Fatalf("err %v, part runs %q", err, p.get())
	}
}

// Through Caddy: a reload that fails to start (its http app cannot bind
// its port), after the tokens part may have taken the new config's
// partners (Caddy starts the apps in no set order), leaves the running
// config's partners and keys in force.
func TestFailedReloadKeepsTokenSettings(t *testing.T) {
	dir := t.TempDir()
	key1 := "first-webhook-key-0123456789abcdef0123456789"
	if err := caddy.Load(fulfilmentConfig(dir, key1, `{}`), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, err := ActiveApp()
	if err != nil {
		t.Fatal(err)
	}
	// The new config has another key for acme and a partner more, and a
	// server on a port another listener holds.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	bad := fmt.Appendf(nil, `{"admin":{"disabled":true},"apps":{"fulfilment":{"data_dir":%q,
		"tokens":{"partners":[{"id":"acme","webhook_key":"second-webhook-key-0123456789abcdef012345678"},
		{"id":"globex","webhook_key":"globex-webhook-key-0123456789abcdef01234567"}]},
		"webhooks":{}},
		"http":{"servers":{"s":{"listen":[%q]}}}}}`, dir, taken.Addr().String())
	if err := caddy.Load(bad, true); err == nil || !strings.Contains(err.Error(), "http app module: start") {
		t.Fatalf("reload error: %v, want the http app's start error", err)
	}
	svc := app.TokenService()
	if _, ok := svc.Partner("globex"); ok {
		t.Fatal("a partner of the refused config is in force")
	}
	acme, ok := svc.Partner("acme")
	if !ok || string(acme.WebhookKey) != key1 {
		t.Fatalf("acme's webhook key is %q, want the running config's", acme.WebhookKey)
	}
}

// A config that started but is stopped because another of its apps failed
// to start (Caddy then keeps the running config) puts the running config's
// partners back as it stops.
func TestStopOfAConfigThatNeverRanRestoresTokens(t *testing.T) {
	running := runApp(t, &App{DataDir: t.TempDir(), Tokens: testTokensConfig()})
	cfg := testTokensConfig()
	cfg.Partners = cfg.Partners[:1] // globex is gone in the new config
	ctx, cancel := newConfigContext(t)
	t.Cleanup(cancel)
	next := loadApp(t, ctx, &App{DataDir: running.DataDir, Tokens: cfg})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	if _, ok := running.TokenService().Partner("partner-globex"); ok {
		t.Fatal("the new config's partners were not applied")
	}
	if err := next.Stop(); err != nil { // the new config's http app failed
		t.Fatal(err)
	}
	if _, ok := running.TokenService().Partner("partner-globex"); !ok {
		t.Fatal("the running config's partners were not put back")
	}
}

// The same for the feed readers: the stopped config's readers go, the
// running config's come back.
func TestStopOfAConfigThatNeverRanRestoresFeeds(t *testing.T) {
	running := runApp(t, pushApp(t)) // a push-only feed "push"
	set, err := feedSetOf(running.current(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	hasFeed := func(name string) bool {
		set.mu.Lock()
		defer set.mu.Unlock()
		_, ok := set.feeds[name]
		return ok
	}
	ctx, cancel := newConfigContext(t)
	t.Cleanup(cancel)
	next := loadApp(t, ctx, &App{DataDir: running.DataDir, Webhooks: running.Webhooks, Tokens: running.Tokens,
		Feeds: []*FeedConfig{{Name: "other"}}})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	if hasFeed("push") || !hasFeed("other") {
		t.Fatal("the new config's feeds were not applied")
	}
	if err := next.Stop(); err != nil { // the new config's http app failed
		t.Fatal(err)
	}
	if !hasFeed("push") || hasFeed("other") {
		t.Fatalf("after the stop: push %v, other %v; want the running config's feeds back", hasFeed("push"), hasFeed("other"))
	}
}

// Caddy can also discard a started config by cancelling its context
// without Stop (its set-up failed after the apps started): the running
// config's partners come back then too, by the time the cancel returns.
func TestCancelOfAConfigThatNeverRanRestoresTokens(t *testing.T) {
	running := runApp(t, &App{DataDir: t.TempDir(), Tokens: testTokensConfig()})
	cfg := testTokensConfig()
	cfg.Partners = cfg.Partners[:1]
	ctx, cancel := newConfigContext(t)
	next := loadApp(t, ctx, &App{DataDir: running.DataDir, Tokens: cfg})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	if _, ok := running.TokenService().Partner("partner-globex"); ok {
		t.Fatal("the new config's partners were not applied")
	}
	cancel() // calls next.Cleanup
	if _, back := running.TokenService().Partner("partner-globex"); !back || next.state.Load() != nil {
		t.Fatalf("after the cancel: the running config's partners put back %v, the discarded config released the data dir %v; want both",
			back, next.state.Load() == nil)
	}

	// A later reload that fails goes back to the running config, not to
	// the discarded one.
	ctx2, cancel2 := newConfigContext(t)
	t.Cleanup(cancel2)
	cfg3 := testTokensConfig()
	cfg3.Partners = cfg3.Partners[1:] // acme is gone in this one
	failed := loadApp(t, ctx2, &App{DataDir: running.DataDir, Tokens: cfg3})
	if err := failed.Start(); err != nil {
		t.Fatal(err)
	}
	if err := failed.Stop(); err != nil {
		t.Fatal(err)
	}
	svc := running.TokenService()
	_, acme := svc.Partner("partner-acme")
	_, globex := svc.Partner("partner-globex")
	if !acme || !globex {
		t.Fatalf("after the failed reload: acme %v, globex %v; want the running config's two partners", acme, globex)
	}

	// Once the running config stops too, the data directory closes.
	if err := running.Stop(); err != nil {
		t.Fatal(err)
	}
	if pooledState(running.dir) != nil {
		t.Fatal("the data directory is still open after every config stopped")
	}
}
