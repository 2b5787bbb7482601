package webhooks

import (
	"errors"
	"net/http"
	"sync"

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
	// partnerClients holds, for each partner that an Allow rule names, a
	// client built from the policy for that partner (made on first use). A
	// partner's exemptions must not ride on connections dialled for
	// another: each has its own connection pool.
	partnerClients *sync.Map // partner id → *http.Client
}

// clientFor returns the client for partnerID's attempts.
func (c *settings) clientFor(partnerID string) *http.Client {
	if !c.built || !c.opts.Policy.NamesPartner(partnerID) {
		return c.client
	}
	if v, ok := c.partnerClients.Load(partnerID); ok {
		return v.(*http.Client)
	}
	v, _ := c.partnerClients.LoadOrStore(partnerID,
		newHTTPClient(c.opts.Policy.ForPartner(partnerID), c.opts.PerTargetConcurrency))
	return v.(*http.Client)
}

// closeIdle drops the idle connections of every client this snapshot
// built.
func (c *settings) closeIdle() {
	c.client.CloseIdleConnections()
	c.partnerClients.Range(func(_, v any) bool {
		v.(*http.Client).CloseIdleConnections()
		return true
	})
}

// newSettings applies New's defaults and checks to o. prev (nil in New) is
// the snapshot being replaced: its built client is reused when the policy
// and the per-target cap are unchanged, so keep-alive connections survive
// a Reconfigure that does not touch them.
func newSettings(o Options, prev *settings) (*settings, error) {
	o.Policy = o.Policy.Clone() // our own copy: a caller's later edits do not leak in
	built := o.HTTPClient == nil
	perTarget := o.PerTargetConcurrency
	if perTarget <= 0 {
		perTarget = DefaultPerTargetConcurrency
	}
	partnerClients := new(sync.Map)
	if built && prev != nil && prev.built && o.Policy.Equal(prev.opts.Policy) &&
		perTarget == prev.opts.PerTargetConcurrency {
		o.Policy, o.HTTPClient, partnerClients = prev.opts.Policy, prev.client, prev.partnerClients
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	return &settings{opts: o, retry: *o.Retry, client: o.HTTPClient, built: built, partnerClients: partnerClients}, nil
}

// cur returns the current settings snapshot.
func (s *Service) cur() *settings { return s.cfg.Load() }

// logger returns the current logger.
func (s *Service) logger() *zap.Logger { return s.cur().opts.Logger }

// Settings returns the effective options now in force (defaults applied).
// Its Policy is a copy; Clock is the service's clock.
func (s *Service) Settings() Options {
	o := s.cur().opts
	o.Policy = o.Policy.Clone()
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
// opts.Storage must be the service's storage; opts.Clock is ignored (a service
// keeps the clock it was created with, so its times stay comparable). On
// error the settings in force stay as they were.
//
// Attempts in flight finish with the settings they started with (timeout,
// headers, client, retry decision, dead retention). Queued deliveries keep
// their first-attempt time and their next due time: a lower MaxAttempts or
// a shorter RetryPeriod applies to them from their next failed attempt.
func (s *Service) Reconfigure(opts Options) error {
	if opts.Storage == nil {
		return errors.New("webhooks: Options.Storage is required")
	}
	if opts.Storage != s.store {
		return errors.New("webhooks: Reconfigure cannot change Options.Storage")
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
		prev.closeIdle()
	}
	s.sched.poke() // more workers or a higher per-target cap: dispatch now
	return nil
}
