// Package portal is the partner portal (http.handlers.fulfilment_portal):
// server-rendered pages where a partner, signed in with a single-use link
// from the operator, manages its OAuth clients (Settings → Integrations)
// and its webhooks. Pages are html/template, assets are embedded; nothing
// needs JavaScript (a small script adds copy buttons). The sign-in,
// session and audit rules live in the portal domain package; this package
// is the HTTP side: routes, the session cookie, CSRF and origin checks,
// security headers, rendering and metrics.
package portal

import (
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/internal/metrics"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	caddy.RegisterModule(new(Handler))
}

// Defaults and bounds of the options that are not the portal domain's.
const (
	DefaultRotationGrace = 24 * time.Hour
	MaxRotationGrace     = 7 * 24 * time.Hour
	DefaultMaxClients    = 10
	MaxMaxClients        = 100
	// maxFormBody bounds every form the portal accepts (413 above).
	maxFormBody = 16 << 10
)

// Handler serves the portal under wherever the operator places it, e.g.
//
//	handle_path /portal/* {
//		fulfilment_portal
//	}
//
// It answers every request that reaches it (it never calls the next
// handler).
type Handler struct {
	// SessionIdle ends a session unused for this long. Default 30m.
	SessionIdle caddy.Duration `json:"session_idle,omitempty"`
	// SessionMax ends a session this long after sign-in, used or not.
	// Default 12h, at most 7 days.
	SessionMax caddy.Duration `json:"session_max,omitempty"`
	// RotationGrace is how long a client's previous secret keeps working
	// after the partner rotates it. Default 24h, at most 7 days.
	RotationGrace caddy.Duration `json:"rotation_grace,omitempty"`
	// MaxClients caps the clients of one partner (those of the
	// configuration included). Default 10.
	MaxClients int `json:"max_clients,omitempty"`
	// TokenURL is the token endpoint's address shown to partners. Default:
	// /api/auth/token on the host and scheme the portal is served on.
	TokenURL string `json:"token_url,omitempty"`

	app      *fulfilment.App
	logger   *zap.Logger
	limits   portal.Limits
	grace    time.Duration
	mux      *http.ServeMux
	pages    *pages
	throttle *tokens.Throttle
}

// CaddyModule returns the Caddy module information.
func (*Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_portal",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision checks the options, parses the templates and finds the
// fulfilment app.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	h.limits = portal.Limits{Idle: time.Duration(h.SessionIdle), Absolute: time.Duration(h.SessionMax)}
	if err := h.limits.Normalize(); err != nil {
		return err
	}
	h.grace = time.Duration(h.RotationGrace)
	if h.grace == 0 {
		h.grace = DefaultRotationGrace
	}
	if h.grace < time.Second || h.grace > MaxRotationGrace {
		return fmt.Errorf("rotation_grace %v: use between 1s and %v", h.grace, MaxRotationGrace)
	}
	if h.MaxClients == 0 {
		h.MaxClients = DefaultMaxClients
	}
	if h.MaxClients < 1 || h.MaxClients > MaxMaxClients {
		return fmt.Errorf("max_clients %d: use between 1 and %d", h.MaxClients, MaxMaxClients)
	}
	if err := checkTokenURL(h.TokenURL); err != nil {
		return err
	}
	pg, err := parsePages()
	if err != nil {
		return err
	}
	h.pages = pg
	// Failed sign-ins per client address: 10 a minute.
	h.throttle = tokens.NewThrottle(tokens.ThrottleConfig{ClientFailures: -1, AddressFailures: 10, AddressWindow: time.Minute}, nil)
	if err := metrics.Register(ctx.GetMetricsRegistry(), portalMetrics().collectors()...); err != nil {
		return fmt.Errorf("registering the portal metrics: %w", err)
	}
	if h.app, err = fulfilhttp.LoadApp(ctx); err != nil {
		return err
	}
	h.mux = h.buildMux()
	return nil
}

// ServeHTTP serves the portal; every answer carries the security headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	setSecurityHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
	return nil
}

var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
