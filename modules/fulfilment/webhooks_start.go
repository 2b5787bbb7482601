package fulfilment

import (
	"errors"
	"fmt"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// provisionWebhooks checks the webhooks block, fills in its defaults and
// registers the webhook metrics into this config's registry.
func (a *App) provisionWebhooks(ctx caddy.Context) error {
	cfg, err := a.Webhooks.withDefaults()
	if err != nil {
		return err
	}
	a.Webhooks = cfg
	for _, n := range cfg.AllowNetworks {
		if len(n.Ports) == 0 {
			a.logger.Warn("webhooks: allow_networks without ports exempts every port of these networks "+
				"(name the receivers' ports: allow_networks <network> { ports <port> })",
				zap.Strings("networks", n.Networks), zap.Strings("partners", n.Partners))
		}
	}
	if err := registerWebhookMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("webhooks: registering metrics: %w", err)
	}
	return nil
}

// webhookRuntime is what lives per data directory, across reloads: the one
// webhook service (subscriptions, queue, dispatcher) and the settings in
// force in it. The configs that started on the data directory (whose
// partners give the webhook keys) are the shared state's.
type webhookRuntime struct {
	svc *webhooks.Service
	st  *sharedState // the data directory it belongs to

	setMu    sync.Mutex       // guards settings; one apply at a time
	settings webhooks.Options // in force in svc (from WebhooksConfig.settings)
}

// Close stops the dispatcher; called when the data directory closes.
func (rt *webhookRuntime) Close() error { return rt.svc.Close() }

// webhookKey resolves a partner's current webhook key at every attempt (so a
// rotated key applies to retries), from the data directory's token service:
// its partners are those of the config whose tokens settings are in force.
func (rt *webhookRuntime) webhookKey(partnerID string) ([]byte, error) {
	svc := rt.st.tokenService()
	if svc == nil {
		return nil, errors.New("the token service is not running")
	}
	return webhookKeyOf(svc, partnerID)
}

// startWebhooks gets the data directory's one webhook service, creating and
// starting it on first use. A reload finds the running one (one dispatcher
// per data directory; in-flight deliveries carry on), points its key
// look-up at the new config's partners and applies the new config's
// settings to it (webhooks.Service.Reconfigure); if they cannot be applied,
// this Start fails and Caddy keeps the running config. When this config
// does not become the running one, the running config's settings are
// applied again (sharedState.applyFor).
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
	forbidden, notes := ownListeners(a.ctx)
	cfg.forbidden = forbidden
	for _, n := range notes {
		logger.Warn("webhooks: " + n)
	}
	logger.Info("webhooks are never sent to the gateway's own listeners", zap.Strings("listeners", describe(forbidden)))
	want := cfg.settings()
	created := false
	v, err := st.service("webhooks", func() (any, error) {
		rt := &webhookRuntime{settings: want, st: st}
		svc, err := webhooks.New(rt.options(want, logger))
		if err != nil {
			return nil, err
		}
		rt.svc = svc
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
			zap.Int("workers", want.Workers), zap.Int("per_partner_concurrency", rt.svc.Settings().PerPartnerConcurrency),
			zap.Int("max_attempts", want.MaxAttempts),
			zap.Duration("retry_period", want.RetryPeriod), zap.Duration("timeout", want.Timeout))
	} else {
		logger.Info("webhook dispatcher kept across reload")
	}
	// A new service already runs with these settings; applying them again
	// keeps its HTTP client (Reconfigure) and records this config as the
	// one whose settings are in force.
	err = st.applyFor(a, "webhooks", func(to *App) error {
		return rt.apply(to.Webhooks.settings(), to.logger.Named("webhooks"))
	})
	if err != nil {
		return err
	}
	cfg.rt = rt
	return nil
}

// errWebhooksNotStarted makes a look-up of the service fail instead of
// creating it.
var errWebhooksNotStarted = errors.New("webhook service not started")

// webhookService returns the data directory's running webhook service, or
// nil when no loaded config holds the data directory. Like current(), it
// also works in the gaps of a reload (this config not started yet, or
// stopped while its server drains): the service is the same one.
func (a *App) WebhookService() *webhooks.Service {
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

// webhookKeyOf returns the webhook key of partner id among svc's partners
// (static and dynamic). An unknown or disabled partner, or one without a
// key, is an error: the attempt fails and is retried, so a partner fixed
// within the retry period still gets its events.
func webhookKeyOf(svc *tokens.Service, id string) ([]byte, error) {
	p, ok := svc.Partner(id)
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
