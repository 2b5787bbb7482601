package caddymodule

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// webhookSettings are the settings of the webhooks block that the service
// takes (at creation, then at each reload through Reconfigure).
type webhookSettings struct {
	Timeout, RetryPeriod, DeadRetention time.Duration
	MaxAttempts, PerTarget, Workers     int
	PerPartner                          int // 0: the service's default
	MaxSubscriptions                    int
	AllowHTTP, StandardWebhooks         bool
	UserAgent                           string
	Allow                               []webhooks.AllowRule
	Forbidden                           []webhooks.ForbiddenTarget // the gateway's own listeners
}

func (c *WebhooksConfig) settings() webhookSettings {
	return webhookSettings{
		Timeout: time.Duration(c.Timeout), RetryPeriod: time.Duration(c.RetryPeriod),
		DeadRetention: time.Duration(c.DeadRetention), MaxAttempts: c.MaxAttempts,
		PerTarget: c.PerTargetConcurrency, Workers: c.Workers, PerPartner: c.PerPartnerConcurrency,
		MaxSubscriptions: c.MaxSubscriptionsPerPartner,
		AllowHTTP:        c.AllowHTTP, StandardWebhooks: c.StandardWebhooks, UserAgent: c.UserAgent,
		Allow: slices.Clone(c.allow), Forbidden: slices.Clone(c.forbidden),
	}
}

// changes returns, for each setting that differs from s to o, the
// Caddyfile option's new value and its previous one ("<option>_was"), as
// log fields. None of these settings is secret.
func (s webhookSettings) changes(o webhookSettings) []zap.Field {
	var out []zap.Field
	add := func(name string, was, now any, differ bool) {
		if differ {
			out = append(out, zap.Any(name, now), zap.Any(name+"_was", was))
		}
	}
	dur := func(name string, was, now time.Duration) { add(name, was.String(), now.String(), was != now) }
	num := func(name string, was, now int) { add(name, was, now, was != now) }
	flag := func(name string, was, now bool) { add(name, was, now, was != now) }
	dur("timeout", s.Timeout, o.Timeout)
	num("max_attempts", s.MaxAttempts, o.MaxAttempts)
	dur("retry_period", s.RetryPeriod, o.RetryPeriod)
	dur("dead_retention", s.DeadRetention, o.DeadRetention)
	num("per_target_concurrency", s.PerTarget, o.PerTarget)
	num("workers", s.Workers, o.Workers)
	num("per_partner_concurrency", s.PerPartner, o.PerPartner)
	num("max_subscriptions_per_partner", s.MaxSubscriptions, o.MaxSubscriptions)
	flag("allow_http", s.AllowHTTP, o.AllowHTTP)
	flag("standard_webhooks", s.StandardWebhooks, o.StandardWebhooks)
	add("user_agent", s.UserAgent, o.UserAgent, s.UserAgent != o.UserAgent)
	was, now := describe(s.Allow), describe(o.Allow)
	add("allow_networks", was, now, !slices.Equal(was, now))
	was, now = describe(s.Forbidden), describe(o.Forbidden)
	add("own_listeners", was, now, !slices.Equal(was, now))
	return out
}

// describe lists xs as strings (for logs).
func describe[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// options are the service options for settings w.
func (rt *webhookRuntime) options(w webhookSettings, logger *zap.Logger) webhooks.Options {
	return webhooks.Options{
		Storage:                    rt.st.Stores.Webhooks(),
		Logger:                     logger,
		MaxSubscriptionsPerPartner: w.MaxSubscriptions,
		AllowHTTP:                  w.AllowHTTP,
		Policy:                     &webhooks.NetPolicy{Allow: slices.Clone(w.Allow), Forbidden: slices.Clone(w.Forbidden)},
		Timeout:                    w.Timeout,
		MaxAttempts:                w.MaxAttempts,
		RetryPeriod:                w.RetryPeriod,
		DeadRetention:              w.DeadRetention,
		PerTargetConcurrency:       w.PerTarget,
		Workers:                    w.Workers,
		PerPartnerConcurrency:      w.PerPartner,
		UserAgent:                  w.UserAgent,
		StandardWebhooks:           w.StandardWebhooks,
		WebhookKey:                 rt.webhookKey,
		Observer:                   whMetrics(),
	}
}

// apply puts settings w in force in the running service (and its logger,
// so the service logs through the newest config). Unchanged settings are
// re-applied too: Reconfigure keeps the HTTP client and its connections
// when the network policy is the same.
func (rt *webhookRuntime) apply(w webhookSettings, logger *zap.Logger) error {
	rt.setMu.Lock()
	defer rt.setMu.Unlock()
	if err := rt.svc.Reconfigure(rt.options(w, logger)); err != nil {
		return fmt.Errorf("applying the new webhooks settings to the running dispatcher: %w "+
			"(the settings in force are unchanged)", err)
	}
	changed := rt.settings.changes(w)
	rt.settings = w
	if len(changed) > 0 {
		logger.Info("webhook settings applied", changed...)
	}
	return nil
}
