package fulfilment

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// settings are the webhooks block as the service takes it (at creation,
// then at each reload through Reconfigure): webhooks.Options without the
// fixed dependencies (database, logger, key look-up, metrics), which
// options adds. A PerPartnerConcurrency of 0 takes the service's default.
func (c *WebhooksConfig) settings() webhooks.Options {
	return webhooks.Options{
		Timeout: time.Duration(c.Timeout), RetryPeriod: time.Duration(c.RetryPeriod),
		DeadRetention: time.Duration(c.DeadRetention), MaxAttempts: c.MaxAttempts,
		PerTargetConcurrency: c.PerTargetConcurrency, Workers: c.Workers, PerPartnerConcurrency: c.PerPartnerConcurrency,
		MaxSubscriptionsPerPartner: c.MaxSubscriptionsPerPartner, DeliveryLogSize: c.DeliveryLogSize,
		AllowHTTP: c.AllowHTTP, StandardWebhooks: c.StandardWebhooks, UserAgent: c.UserAgent,
		Policy: &netpolicy.Policy{Allow: slices.Clone(c.allow), Forbidden: slices.Clone(c.forbidden)},
	}
}

// changes returns, for each setting that differs from s to o (both from
// settings), the Caddyfile option's new value and its previous one
// ("<option>_was"), as log fields. None of these settings is secret.
func changes(s, o webhooks.Options) []zap.Field {
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
	num("delivery_log_size", s.DeliveryLogSize, o.DeliveryLogSize)
	num("per_target_concurrency", s.PerTargetConcurrency, o.PerTargetConcurrency)
	num("workers", s.Workers, o.Workers)
	num("per_partner_concurrency", s.PerPartnerConcurrency, o.PerPartnerConcurrency)
	num("max_subscriptions_per_partner", s.MaxSubscriptionsPerPartner, o.MaxSubscriptionsPerPartner)
	flag("allow_http", s.AllowHTTP, o.AllowHTTP)
	flag("standard_webhooks", s.StandardWebhooks, o.StandardWebhooks)
	add("user_agent", s.UserAgent, o.UserAgent, s.UserAgent != o.UserAgent)
	was, now := describe(s.Policy.Allow), describe(o.Policy.Allow)
	add("allow_networks", was, now, !slices.Equal(was, now))
	was, now = describe(s.Policy.Forbidden), describe(o.Policy.Forbidden)
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

// options are the service options for settings w (from settings) with the
// service's fixed dependencies.
func (rt *webhookRuntime) options(w webhooks.Options, logger *zap.Logger) webhooks.Options {
	w.Storage = rt.st.Stores.Webhooks()
	w.Logger = logger
	w.Policy = &netpolicy.Policy{Allow: slices.Clone(w.Policy.Allow), Forbidden: slices.Clone(w.Policy.Forbidden)}
	w.WebhookKey = rt.webhookKey
	w.Observer = whMetrics()
	return w
}

// apply puts settings w in force in the running service (and its logger,
// so the service logs through the newest config). Unchanged settings are
// re-applied too: Reconfigure keeps the HTTP client and its connections
// when the network policy is the same.
func (rt *webhookRuntime) apply(w webhooks.Options, logger *zap.Logger) error {
	rt.setMu.Lock()
	defer rt.setMu.Unlock()
	if err := rt.svc.Reconfigure(rt.options(w, logger)); err != nil {
		return fmt.Errorf("applying the new webhooks settings to the running dispatcher: %w "+
			"(the settings in force are unchanged)", err)
	}
	changed := changes(rt.settings, w)
	rt.settings = w
	if len(changed) > 0 {
		logger.Info("webhook settings applied", changed...)
	}
	return nil
}
