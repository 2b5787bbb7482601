// Package gateway holds fulfilment_gateway: the partner-facing jobs of a
// gateway site (partner portal, token endpoint, Bearer guard,
// subscriptions API, version mapping) as one Caddy handler, in their fixed
// order. Each job is still its own module in its own package, configured
// as in its own directive; this handler only runs them, so that a request
// passes one Caddy handler instead of five (Caddy allocates a closure and
// looks up its server in the request's context for every handler of a
// route, on every request).
package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/portal"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/subscriptions"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/tokenauth"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/versions"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler runs the gateway's jobs on every request, in this order:
//
//  1. the partner portal (optional) answers the paths under its prefix;
//  2. the token endpoint (optional) answers its path;
//  3. the Bearer guard answers every other request without a valid token
//     (401, 403 when expired) and admits the rest;
//  4. the subscriptions API (optional) answers its paths;
//  5. the version mapping answers or rewrites every other request, which
//     then goes on to the next handler (the reverse proxy to the WMS).
//
// The guard and the version mapping are required, so no configuration of
// this handler forwards a request without a verified partner or outside
// the mapped resources. Each job is the module of its own directive
// (fulfilment_portal, fulfilment_token, fulfilment_auth,
// fulfilment_subscriptions, fulfilment_version), given with its "handler"
// name in JSON.
type Handler struct {
	// The partner portal (fulfilment_portal). It must have a prefix.
	PortalRaw json.RawMessage `json:"portal,omitempty" caddy:"namespace=http.handlers inline_key=handler"`
	// The token endpoint (fulfilment_token). It must have a path.
	TokenRaw json.RawMessage `json:"token,omitempty" caddy:"namespace=http.handlers inline_key=handler"`
	// The Bearer guard (fulfilment_auth). Required.
	AuthRaw json.RawMessage `json:"auth,omitempty" caddy:"namespace=http.handlers inline_key=handler"`
	// The subscriptions API (fulfilment_subscriptions).
	SubscriptionsRaw json.RawMessage `json:"subscriptions,omitempty" caddy:"namespace=http.handlers inline_key=handler"`
	// The version mapping (fulfilment_version). Required.
	VersionRaw json.RawMessage `json:"version,omitempty" caddy:"namespace=http.handlers inline_key=handler"`

	portal        *portal.Handler
	token         *tokenauth.TokenHandler
	auth          *tokenauth.AuthHandler
	subscriptions *subscriptions.SubscriptionsHandler
	version       *versions.VersionHandler
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_gateway",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision loads and provisions the jobs (Caddy provisions, validates and
// cleans up each as a module of its own, with its own logger).
func (h *Handler) Provision(ctx caddy.Context) error {
	if h.AuthRaw == nil {
		return errors.New("fulfilment_gateway: the Bearer guard (auth) is required")
	}
	if h.VersionRaw == nil {
		return errors.New("fulfilment_gateway: the version mapping (version) is required: without it every path under the guard would reach the WMS")
	}
	var err error
	if h.portal, err = load[*portal.Handler](ctx, h, h.PortalRaw, "PortalRaw", "portal", "fulfilment_portal"); err != nil {
		return err
	}
	if h.token, err = load[*tokenauth.TokenHandler](ctx, h, h.TokenRaw, "TokenRaw", "token", "fulfilment_token"); err != nil {
		return err
	}
	if h.auth, err = load[*tokenauth.AuthHandler](ctx, h, h.AuthRaw, "AuthRaw", "auth", "fulfilment_auth"); err != nil {
		return err
	}
	if h.subscriptions, err = load[*subscriptions.SubscriptionsHandler](ctx, h, h.SubscriptionsRaw, "SubscriptionsRaw", "subscriptions", "fulfilment_subscriptions"); err != nil {
		return err
	}
	if h.version, err = load[*versions.VersionHandler](ctx, h, h.VersionRaw, "VersionRaw", "version", "fulfilment_version"); err != nil {
		return err
	}
	h.PortalRaw, h.TokenRaw, h.AuthRaw, h.SubscriptionsRaw, h.VersionRaw = nil, nil, nil, nil, nil
	return nil
}

// load loads the job in h's field (JSON key key) if it is set (raw is its
// value), and checks it is the module want.
func load[T caddy.Module](ctx caddy.Context, h *Handler, raw json.RawMessage, field, key, want string) (T, error) {
	var zero T
	if raw == nil {
		return zero, nil
	}
	mod, err := ctx.LoadModule(h, field)
	if err != nil {
		return zero, fmt.Errorf("fulfilment_gateway: %s: %w", key, err)
	}
	job, ok := mod.(T)
	if !ok {
		return zero, fmt.Errorf("fulfilment_gateway: %s must be the %s handler, not %s",
			key, want, mod.(caddy.Module).CaddyModule().ID.Name())
	}
	return job, nil
}

// Validate refuses jobs that would answer every request: inside the
// gateway, the portal needs a prefix and the token endpoint a path.
func (h *Handler) Validate() error {
	if h.portal != nil && h.portal.Prefix == "" {
		return errors.New("fulfilment_gateway: the portal needs a prefix (e.g. /portal): without one it would answer every request")
	}
	if h.token != nil && h.token.Path == "" {
		return errors.New("fulfilment_gateway: the token endpoint needs a path (e.g. /api/auth/token): without one it would answer every request")
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler: the jobs in their
// order, each answering its own requests, the rest going on to next after
// the version mapping.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	path := r.URL.Path
	if h.portal != nil && h.portal.Answers(path) {
		return h.portal.ServeHTTP(w, r, notPassedOn)
	}
	if h.token != nil && h.token.Answers(path) {
		return h.token.ServeHTTP(w, r, notPassedOn)
	}
	// The version mapping makes the request safe to forward (Connection,
	// upgrade, trailers) before it forwards; the guard leaves that to it.
	id, ok := h.auth.AdmitBeforeVersion(w, r)
	if !ok {
		return nil
	}
	if h.subscriptions != nil && h.subscriptions.Answers(path) {
		return h.subscriptions.ServeHTTP(w, r, notPassedOn)
	}
	return h.version.ServeVerified(w, r, next, id)
}

// notPassedOn is the next handler of the jobs that answer their own
// paths: each answers every request its Answers claims, so none calls it.
// Were one ever to, the request would otherwise skip the guard or the
// version mapping; this fails it closed with a 500 instead.
var notPassedOn = caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
	return caddyhttp.Error(http.StatusInternalServerError,
		errors.New("fulfilment_gateway: a job passed on a request it claimed"))
})

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
