package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

const gatewayModulePath = "github.com/fulfilgate/fulfilgate"

// webhooksGatewayVersion is the version of the gateway module in this binary
// (from the build info), or "dev" for a build from a working tree.
func webhooksGatewayVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := ""
	if bi.Main.Path == gatewayModulePath {
		v = bi.Main.Version
	}
	for _, dep := range bi.Deps {
		if dep.Path == gatewayModulePath {
			v = dep.Version
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

// provisionWebhooks checks the webhooks block, fills in its defaults and
// registers the webhook metrics into this config's registry.
func (a *App) provisionWebhooks(ctx caddy.Context) error {
	cfg, err := a.Webhooks.withDefaults()
	if err != nil {
		return err
	}
	a.Webhooks = cfg
	if err := registerWebhookMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("webhooks: registering metrics: %w", err)
	}
	return nil
}

// webhookRuntime is what lives per data directory, across reloads: the one
// webhook service (subscriptions, queue, dispatcher) and the apps of the
// configs that started with it, whose partners give the webhook keys.
type webhookRuntime struct {
	svc *webhooks.Service
	st  *sharedState // the data directory it belongs to

	setMu     sync.Mutex      // guards settings, appliedBy; one apply at a time
	settings  webhookSettings // in force in svc
	appliedBy *App            // the config whose settings are in force

	mu   sync.Mutex
	apps []*App // in start order; pruned at each start
}

// Close stops the dispatcher; called when the data directory closes.
func (rt *webhookRuntime) Close() error { return rt.svc.Close() }

// attach records a config's app as the newest, forgetting apps that are no
// longer running.
func (rt *webhookRuntime) attach(a *App) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.apps = slices.DeleteFunc(rt.apps, func(x *App) bool { return x == a || x.state.Load() == nil })
	rt.apps = append(rt.apps, a)
}

// keyApp is the app whose partners resolve webhook keys: the newest fully
// started one (so a config whose Start failed after this part, and that
// Caddy therefore never ran, is skipped), else the newest.
func (rt *webhookRuntime) keyApp() *App {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i := len(rt.apps) - 1; i >= 0; i-- {
		if rt.apps[i].state.Load() != nil {
			return rt.apps[i]
		}
	}
	if len(rt.apps) == 0 {
		return nil
	}
	return rt.apps[len(rt.apps)-1]
}

// webhookKey resolves a partner's current webhook key at every attempt (so a
// rotated key applies to retries).
func (rt *webhookRuntime) webhookKey(partnerID string) ([]byte, error) {
	a := rt.keyApp()
	if a == nil {
		return nil, errors.New("no running config")
	}
	return a.webhookKeyOf(partnerID)
}

// startWebhooks gets the data directory's one webhook service, creating and
// starting it on first use. A reload finds the running one (one dispatcher
// per data directory; in-flight deliveries carry on), points its key
// look-up at the new config's partners and applies the new config's
// settings to it (webhooks.Service.Reconfigure); if they cannot be applied,
// this Start fails and Caddy keeps the running config. When this config is
// unloaded without having become the running one (a later part of its
// Start failed), the running config's settings are applied again.
func (a *App) startWebhooks(st *sharedState) error {
	cfg := a.Webhooks
	if cfg == nil { // Start without Provision (tests)
		var err error
		if cfg, err = (*WebhooksConfig)(nil).withDefaults(); err != nil {
			return err
		}
		a.Webhooks = cfg
	}
	logger := a.logger.Named("webhooks")
	want := cfg.settings()
	created := false
	v, err := st.service("webhooks", func() (any, error) {
		rt := &webhookRuntime{settings: want, st: st, appliedBy: a}
		svc, err := webhooks.New(rt.options(want, logger))
		if err != nil {
			return nil, err
		}
		rt.svc = svc
		rt.attach(a)
		svc.Start()
		created = true
		return rt, nil
	})
	if err != nil {
		return err
	}
	rt := v.(*webhookRuntime)
	if created {
		logger.Info("webhook dispatcher started",
			zap.Int("workers", want.Workers), zap.Int("max_attempts", want.MaxAttempts),
			zap.Duration("retry_period", want.RetryPeriod), zap.Duration("timeout", want.Timeout))
	} else {
		logger.Info("webhook dispatcher kept across reload")
		if err := rt.apply(a, want, logger); err != nil {
			return err
		}
	}
	rt.attach(a)
	cfg.rt = rt
	if a.ctx.Context != nil {
		context.AfterFunc(a.ctx, func() { rt.revert(a) })
	}
	return nil
}

// errWebhooksNotStarted makes a look-up of the service fail instead of
// creating it.
var errWebhooksNotStarted = errors.New("webhook service not started")

// webhookService returns the data directory's running webhook service, or
// nil when no loaded config holds the data directory. Like current(), it
// also works in the gaps of a reload (this config not started yet, or
// stopped while its server drains): the service is the same one.
func (a *App) webhookService() *webhooks.Service {
	if a == nil {
		return nil
	}
	st := a.current()
	if st == nil {
		return nil
	}
	if c := a.Webhooks; c != nil && c.rt != nil && c.rt.st == st {
		return c.rt.svc // steady path: no lock
	}
	v, err := st.service("webhooks", func() (any, error) { return nil, errWebhooksNotStarted })
	if err != nil {
		return nil
	}
	return v.(*webhookRuntime).svc
}

// webhookKeyOf returns the webhook key of partner id from the tokens
// part's partners (static and dynamic). An unknown or disabled partner, or
// one without a key, is an error: the attempt fails and is retried, so a
// partner fixed within the retry period still gets its events.
func (a *App) webhookKeyOf(id string) ([]byte, error) {
	p, ok := a.partner(id)
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown partner %q", id)
	case p.Disabled:
		return nil, fmt.Errorf("partner %q is disabled", id)
	case len(p.WebhookKey) == 0:
		return nil, fmt.Errorf("partner %q has no webhook key", id)
	}
	return p.WebhookKey, nil
}
