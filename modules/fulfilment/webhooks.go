package fulfilment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// WebhooksConfig is the "webhooks" block of the fulfilment app: the
// subscriptions API's limits, the SSRF policy and webhook delivery. Every
// field is optional; a missing block means all defaults.
//
// The delivery settings (timeout, attempts, retry period, retention,
// concurrency, user agent, Standard Webhooks headers) belong to the one
// dispatcher of a data directory, which outlives config reloads; see
// startWebhooks for how a reload applies them.
type WebhooksConfig struct {
	// Timeout of one delivery attempt: the receiver must answer 2xx within
	// it. Default: 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxAttempts is the number of attempts after which a delivery is given
	// up and kept as dead. Default and maximum: 185 (the interface's limit).
	MaxAttempts int `json:"max_attempts,omitempty"`

	// RetryPeriod is how long after its first attempt a delivery is retried
	// at most; the back-off spreads the attempts over this period.
	// Default and maximum: 24h (the interface's limit).
	RetryPeriod caddy.Duration `json:"retry_period,omitempty"`

	// DeadRetention is how long a dead delivery is kept for listing and
	// replay before it is deleted. Default: 7 days (168h).
	DeadRetention caddy.Duration `json:"dead_retention,omitempty"`

	// DeliveryLogSize is how many delivered deliveries the partners'
	// delivery log keeps per subscription (the latest, none older than
	// DeadRetention); -1 keeps none. Default: 100, at most 1000.
	DeliveryLogSize int `json:"delivery_log_size,omitempty"`

	// PerTargetConcurrency caps the attempts in flight to one notification
	// URL host. Default: 4.
	PerTargetConcurrency int `json:"per_target_concurrency,omitempty"`

	// Workers is the number of delivery attempts in flight in total.
	// Default: 64.
	Workers int `json:"workers,omitempty"`

	// PerPartnerConcurrency caps one partner's attempts in flight, so that
	// its slow or dead receivers hold at most this many workers; partners
	// with due deliveries take free workers in turn. Default: a quarter of
	// workers (16 of 64), at least 1; at most workers.
	PerPartnerConcurrency int `json:"per_partner_concurrency,omitempty"`

	// MaxSubscriptionsPerPartner caps each partner's subscriptions; one
	// more is refused with 409. Default: 100.
	MaxSubscriptionsPerPartner int `json:"max_subscriptions_per_partner,omitempty"`

	// AllowHTTP accepts plain http notification URLs. Default: false
	// (https only). Meant for tests and demos.
	AllowHTTP bool `json:"allow_http,omitempty"`

	// AllowNetworks are exemptions from the SSRF rules (which refuse
	// loopback, private, link-local, multicast and unspecified addresses):
	// networks, at the ports and for the partners each names, that may be
	// registered and dialled. Default: none. The gateway's own listeners
	// (admin endpoint, servers) are never exempted.
	AllowNetworks []AllowNetwork `json:"allow_networks,omitempty"`

	// StandardWebhooks also sends the Standard Webhooks headers
	// webhook-id, webhook-timestamp and webhook-signature beside the
	// x-hook-* headers. Default: false.
	StandardWebhooks bool `json:"standard_webhooks,omitempty"`

	// UserAgent of delivery requests. Default: "Fulfilgate-Webhooks/<version>"
	// with the gateway module's version.
	UserAgent string `json:"user_agent,omitempty"`

	allow     []netpolicy.AllowRule       // parsed AllowNetworks
	forbidden []netpolicy.ForbiddenTarget // the gateway's own listeners, set by startWebhooks
	rt        *webhookRuntime             // set by startWebhooks
}

// UnmarshalCaddyfile parses the "webhooks" block of the fulfilment global
// option; d is positioned on the "webhooks" token. Full syntax:
//
//	webhooks {
//		timeout                       <duration>   # default 10s
//		max_attempts                  <n>          # default 185
//		retry_period                  <duration>   # default 24h
//		dead_retention                <duration>   # default 7d
//		delivery_log_size             <n>|off      # default 100, at most 1000
//		per_target_concurrency        <n>          # default 4
//		workers                       <n>          # default 64
//		per_partner_concurrency       <n>          # default workers/4 (16), at most workers
//		max_subscriptions_per_partner <n>          # default 100
//		allow_http                                 # default off: https only
//		allow_networks                <cidr|ip...> [{   # repeatable; default none
//			ports    <port|low-high>...         # default every port (warned)
//			partners <partner-id>...            # default every partner
//		}]
//		standard_webhooks                          # default off
//		user_agent                    <string>     # default Fulfilgate-Webhooks/<version>
//	}
//
// Durations take Caddy's units (ms, s, m, h, d). Each option may appear
// once, except allow_networks: each line is one exemption.
func (c *WebhooksConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "webhooks"
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "timeout":
			err = caddyfileargs.Duration(d, &c.Timeout)
		case "retry_period":
			err = caddyfileargs.Duration(d, &c.RetryPeriod)
		case "dead_retention":
			err = caddyfileargs.Duration(d, &c.DeadRetention)
		case "delivery_log_size":
			err = parseDeliveryLogSize(d, &c.DeliveryLogSize)
		case "max_attempts":
			err = caddyfileargs.PositiveInt(d, &c.MaxAttempts)
		case "per_target_concurrency":
			err = caddyfileargs.PositiveInt(d, &c.PerTargetConcurrency)
		case "workers":
			err = caddyfileargs.PositiveInt(d, &c.Workers)
		case "per_partner_concurrency":
			err = caddyfileargs.PositiveInt(d, &c.PerPartnerConcurrency)
		case "max_subscriptions_per_partner":
			err = caddyfileargs.PositiveInt(d, &c.MaxSubscriptionsPerPartner)
		case "allow_http":
			err = caddyfileargs.Flag(d, &c.AllowHTTP)
		case "standard_webhooks":
			err = caddyfileargs.Flag(d, &c.StandardWebhooks)
		case "allow_networks":
			var n AllowNetwork
			if n, err = parseAllowNetwork(d); err == nil {
				c.AllowNetworks = append(c.AllowNetworks, n)
			}
		case "user_agent":
			err = caddyfileargs.String(d, &c.UserAgent)
		default:
			return d.Errf("unknown webhooks option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseDeliveryLogSize reads delivery_log_size: a positive number, or off
// (-1: keep none), once.
func parseDeliveryLogSize(d *caddyfile.Dispenser, into *int) error {
	name := d.Val()
	if err := caddyfileargs.Once(d, *into != 0); err != nil {
		return err
	}
	v, err := caddyfileargs.One(d)
	if err != nil {
		return err
	}
	if v == "off" {
		*into = -1
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return d.Errf("%s must be a positive integer or off, got %q", name, v)
	}
	*into = n
	return nil
}

// withDefaults returns a copy of c (which may be nil) with every unset
// field given its default, the networks parsed, and the values checked.
func (c *WebhooksConfig) withDefaults() (*WebhooksConfig, error) {
	out := new(WebhooksConfig)
	if c != nil {
		*out = *c
		out.AllowNetworks = slices.Clone(c.AllowNetworks)
	}
	setDur := func(v *caddy.Duration, def time.Duration) {
		if *v == 0 {
			*v = caddy.Duration(def)
		}
	}
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setDur(&out.Timeout, webhooks.DefaultTimeout)
	setDur(&out.RetryPeriod, webhooks.DefaultRetryPeriod)
	setDur(&out.DeadRetention, webhooks.DefaultDeadRetention)
	setInt(&out.MaxAttempts, webhooks.DefaultMaxAttempts)
	setInt(&out.PerTargetConcurrency, webhooks.DefaultPerTargetConcurrency)
	setInt(&out.Workers, webhooks.DefaultWorkers)
	setInt(&out.MaxSubscriptionsPerPartner, webhooks.DefaultMaxSubscriptionsPerPartner)
	setInt(&out.DeliveryLogSize, webhooks.DefaultDeliveryLogSize)
	if out.UserAgent == "" {
		out.UserAgent = "Fulfilgate-Webhooks/" + Version()
	}

	var errs []string
	for name, v := range map[string]int64{
		"timeout": int64(out.Timeout), "retry_period": int64(out.RetryPeriod),
		"dead_retention": int64(out.DeadRetention), "max_attempts": int64(out.MaxAttempts),
		"per_target_concurrency": int64(out.PerTargetConcurrency), "workers": int64(out.Workers),
		"per_partner_concurrency":       int64(out.PerPartnerConcurrency),
		"max_subscriptions_per_partner": int64(out.MaxSubscriptionsPerPartner),
	} {
		if v < 0 {
			errs = append(errs, name+" must be positive")
		}
	}
	// The interface promises retries for 24 hours and at most 185 attempts
	// (the service's defaults): an operator may shorten them, never extend
	// them.
	if out.MaxAttempts > webhooks.DefaultMaxAttempts {
		errs = append(errs, fmt.Sprintf("max_attempts (%d) is more than the interface allows (%d)",
			out.MaxAttempts, webhooks.DefaultMaxAttempts))
	}
	if out.RetryPeriod > caddy.Duration(webhooks.DefaultRetryPeriod) {
		errs = append(errs, fmt.Sprintf("retry_period (%s) is longer than the interface allows (%s)",
			time.Duration(out.RetryPeriod), webhooks.DefaultRetryPeriod))
	}
	if out.DeliveryLogSize < -1 || out.DeliveryLogSize > webhooks.MaxDeliveryLogSize {
		errs = append(errs, fmt.Sprintf("delivery_log_size (%d) must be from 1 to %d, or off (-1)",
			out.DeliveryLogSize, webhooks.MaxDeliveryLogSize))
	}
	if out.PerPartnerConcurrency > out.Workers {
		errs = append(errs, fmt.Sprintf("per_partner_concurrency (%d) is more than workers (%d)",
			out.PerPartnerConcurrency, out.Workers))
	}
	if out.Timeout > out.RetryPeriod {
		errs = append(errs, fmt.Sprintf("timeout (%s) is longer than retry_period (%s)",
			time.Duration(out.Timeout), time.Duration(out.RetryPeriod)))
	}
	// The service's own rule, so that `caddy validate` refuses what Start
	// would.
	if err := webhooks.CheckUserAgent(out.UserAgent); err != nil {
		errs = append(errs, "user_agent "+err.Error())
	}
	for _, n := range out.AllowNetworks {
		r, err := n.rule()
		if err != nil {
			errs = append(errs, "allow_networks: "+err.Error())
			continue
		}
		out.allow = append(out.allow, r)
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("webhooks: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
