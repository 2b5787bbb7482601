package webhooks

import (
	"errors"
	"net/http"
	"net/netip"
	"slices"

	"go.uber.org/zap"
)

// settings is one immutable snapshot of a Service's reconfigurable
// settings. Reconfigure publishes a new one atomically; the hot paths load
// it once per use (an attempt loads it once at its start, so it finishes
// with the settings it started with; a dispatcher pass loads it once).
type settings struct {
	opts   Options      // defaults applied; Policy is the service's own copy
	retry  RetryPolicy  // == *opts.Retry
	client *http.Client // == opts.HTTPClient
	built  bool         // client was built from opts.Policy (not given by the caller)
}

// newSettings applies New's defaults and checks to o. prev (nil in New) is
// the snapshot being replaced: its built client is reused when the policy
// and the per-target cap are unchanged, so keep-alive connections survive
// a Reconfigure that does not touch them.
func newSettings(o Options, prev *settings) (*settings, error) {
	if o.Policy != nil { // our own copy: a caller's later edits do not leak in
		o.Policy = &NetPolicy{Allow: slices.Clone(o.Policy.Allow)}
	}
	built := o.HTTPClient == nil
	perTarget := o.PerTargetConcurrency
	if perTarget <= 0 {
		perTarget = DefaultPerTargetConcurrency
	}
	if built && prev != nil && prev.built && samePolicy(o.Policy, prev.opts.Policy) &&
		perTarget == prev.opts.PerTargetConcurrency {
		o.Policy, o.HTTPClient = prev.opts.Policy, prev.client
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	return &settings{opts: o, retry: *o.Retry, client: o.HTTPClient, built: built}, nil
}

// samePolicy compares two policies by their Allow lists (nil is empty).
func samePolicy(a, b *NetPolicy) bool {
	var x, y []netip.Prefix
	if a != nil {
		x = a.Allow
	}
	if b != nil {
		y = b.Allow
	}
	return slices.Equal(x, y)
}

// cur returns the current settings snapshot.
func (s *Service) cur() *settings { return s.cfg.Load() }

// logger returns the current logger.
func (s *Service) logger() *zap.Logger { return s.cur().opts.Logger }

// Settings returns the effective options now in force (defaults applied).
// Its Policy is a copy; Clock is the service's clock.
func (s *Service) Settings() Options {
	o := s.cur().opts
	o.Policy = &NetPolicy{Allow: slices.Clone(o.Policy.Allow)}
	r := *o.Retry
	o.Retry = &r
	return o
}

// Reconfigure validates opts as New does (same defaults and required
// fields) and swaps the service's settings atomically: Timeout, UserAgent,
// StandardWebhooks, MaxAttempts, RetryPeriod and Retry, DeadRetention,
// Workers, PerTargetConcurrency, the HTTP client (rebuilt from Policy when
// Policy or PerTargetConcurrency change and HTTPClient is nil, so a changed
// allow list applies to the next dial), MaxSubscriptionsPerPartner,
// AllowHTTP, Policy, and also Logger, WebhookKey, Observer and Rand.
//
// opts.DB must be the service's database; opts.Clock is ignored (a service
// keeps the clock it was created with, so its times stay comparable). On
// error the settings in force stay as they were.
//
// Attempts in flight finish with the settings they started with (timeout,
// headers, client, retry decision, dead retention). Queued deliveries keep
// their first-attempt time and their next due time: a lower MaxAttempts or
// a shorter RetryPeriod applies to them from their next failed attempt.
func (s *Service) Reconfigure(opts Options) error {
	if opts.DB == nil {
		return errors.New("webhooks: Options.DB is required")
	}
	if opts.DB != s.db {
		return errors.New("webhooks: Reconfigure cannot change Options.DB")
	}
	s.reconfMu.Lock()
	defer s.reconfMu.Unlock()
	prev := s.cur()
	opts.Clock = s.clock
	next, err := newSettings(opts, prev)
	if err != nil {
		return err
	}
	s.cfg.Store(next)
	if prev.built && prev.client != next.client {
		// Attempts in flight keep their connections; idle ones of the old
		// client are dropped, so nothing dials or reuses under the old
		// policy from now on.
		prev.client.CloseIdleConnections()
	}
	s.sched.poke() // more workers or a higher per-target cap: dispatch now
	return nil
}
