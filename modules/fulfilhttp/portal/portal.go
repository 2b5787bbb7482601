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
	"path"
	"strings"
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
	DefaultMaxClients    = tokens.DefaultClientLimit
	MaxMaxClients        = tokens.MaxClientLimit
	// maxFormBody bounds every form the portal accepts (413 above).
	maxFormBody = 16 << 10
)

// Handler serves the portal. With Prefix it answers the requests under
// that path and passes every other one on, so it can stand first in a
// site's flat list of handlers without a path matcher:
//
//	fulfilment_portal {
//		prefix /portal
//	}
//
// Without Prefix it answers every request that reaches it, e.g. under
// handle_path /portal/* or as the only handler of a site of its own.
type Handler struct {
	// Prefix is the path the portal is served under, e.g. /portal: the
	// handler answers requests for Prefix and below it (exactly, case
	// included: a byte comparison, where a path matcher would lower-case,
	// clean and match every request's path) and passes the others to the
	// next handler. Must be an absolute, clean path other than "/".
	// Default: none (the handler answers every request it is given).
	Prefix string `json:"prefix,omitempty"`
	// SessionIdle ends a session unused for this long. Default 30m.
	SessionIdle caddy.Duration `json:"session_idle,omitempty"`
	// SessionMax ends a session this long after sign-in, used or not.
	// Default 12h, at most 7 days.
	SessionMax caddy.Duration `json:"session_max,omitempty"`
	// RotationGrace is how long a client's previous secret keeps working
	// after the partner rotates it. Default 24h, at most 7 days.
	RotationGrace caddy.Duration `json:"rotation_grace,omitempty"`
	// MaxClients caps the clients of one partner (those of the
	// configuration included). Default 10, at most 100. The operator's
	// add-client keeps to it too (to the smallest of the config's portals).
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
	if h.Prefix != "" && (h.Prefix == "/" || h.Prefix[0] != '/' || path.Clean(h.Prefix) != h.Prefix) {
		return fmt.Errorf("prefix %q: must be an absolute, clean path other than / such as /portal", h.Prefix)
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
	h.app.NoteClientLimit(h.MaxClients)
	h.mux = h.buildMux()
	return nil
}

// ServeHTTP serves the portal (with Prefix, only the requests under it);
// every answer carries the security headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.Prefix != "" {
		if !h.Answers(r.URL.Path) {
			return next.ServeHTTP(w, r)
		}
		rest := r.URL.Path[len(h.Prefix):]
		switch {
		case rest == "":
			setSecurityHeaders(w.Header())
			http.Redirect(w, r, basePath(r)+h.Prefix+"/", http.StatusPermanentRedirect)
			return nil
		}
		r = withPath(r, rest)
	}
	setSecurityHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
	return nil
}

// Answers reports whether the portal answers a request for path when it
// has a prefix: the prefix itself, or the prefix, a slash and more.
// (Without a prefix the portal answers every request: ServeHTTP does not
// ask.)
func (h *Handler) Answers(path string) bool {
	rest, ok := strings.CutPrefix(path, h.Prefix)
	return ok && (rest == "" || rest[0] == '/')
}

// withPath is r with its URL's path replaced (the portal's routes are
// relative to Prefix).
func withPath(r *http.Request, p string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2.URL = &u
	return r2
}

// AnswersOnlyItsPath reports whether the handler passes requests outside
// Prefix to the next handler, so that its route needs no path matcher.
func (h *Handler) AnswersOnlyItsPath() bool { return h.Prefix != "" }

var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
