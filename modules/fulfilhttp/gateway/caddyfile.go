package gateway

import (
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/portal"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/subscriptions"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/tokenauth"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/versions"
)

func init() {
	httpcaddyfile.RegisterDirective("fulfilment_gateway", parseGatewayRoute)
}

// parseGatewayRoute is the directive's route: the gateway without a
// matcher. A matcher is refused: the requests it leaves out would skip
// the guard and the version mapping and go straight to the handler after
// the gateway, the proxy to the WMS. (To serve the gateway under a path,
// put it and its reverse_proxy in one handle block.)
func parseGatewayRoute(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	matcher, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	if matcher != nil {
		h.Next() // the directive's line, for the error's position
		return nil, h.Err("fulfilment_gateway takes no matcher: the requests it left out would reach the handler after it (the proxy to the WMS) without the guard; to serve the gateway under a path, put it and its reverse_proxy in one handle block")
	}
	g, err := parseGatewayDirective(h)
	if err != nil {
		return nil, err
	}
	return h.NewRoute(nil, g), nil
}

// The defaults of the jobs' own paths inside fulfilment_gateway (each
// job's own directive has none: alone, it answers every request).
const (
	DefaultPortalPrefix = "/portal"
	DefaultTokenPath    = "/api/auth/token"
)

// parseGatewayDirective parses the fulfilment_gateway directive:
//
//	fulfilment_gateway {
//		portal        [{ <fulfilment_portal's options> }]       # optional; prefix default /portal
//		token         [{ <fulfilment_token's options> }]        # optional; path default /api/auth/token
//		auth          [<identity_header>] [{ <fulfilment_auth's options> }]  # required
//		subscriptions [{ <fulfilment_subscriptions's options> }] # optional
//		version       { <fulfilment_version's options> }        # required
//	}
//
// Each job takes the options of its own directive. They run in the order
// above whatever order they are written in.
func parseGatewayDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	g := new(Handler)
	return g, g.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler (syntax above).
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		job := d.Val()
		seg := d.NewFromNextSegment()
		var raw *[]byte
		var err error
		var mod caddyfile.Unmarshaler
		switch job {
		case "portal":
			p := new(portal.Handler)
			err = p.UnmarshalCaddyfile(seg)
			if p.Prefix == "" {
				p.Prefix = DefaultPortalPrefix
			}
			raw, mod = (*[]byte)(&h.PortalRaw), p
		case "token":
			t := new(tokenauth.TokenHandler)
			err = t.UnmarshalCaddyfile(seg)
			if t.Path == "" {
				t.Path = DefaultTokenPath
			}
			raw, mod = (*[]byte)(&h.TokenRaw), t
		case "auth":
			a := new(tokenauth.AuthHandler)
			raw, mod, err = (*[]byte)(&h.AuthRaw), a, a.UnmarshalCaddyfile(seg)
		case "subscriptions":
			s := new(subscriptions.SubscriptionsHandler)
			raw, mod, err = (*[]byte)(&h.SubscriptionsRaw), s, s.UnmarshalCaddyfile(seg)
		case "version":
			v := new(versions.VersionHandler)
			raw, mod, err = (*[]byte)(&h.VersionRaw), v, v.UnmarshalCaddyfile(seg)
		default:
			return d.Errf("unknown fulfilment_gateway job %q (portal, token, auth, subscriptions, version)", job)
		}
		if err != nil {
			return err
		}
		if *raw != nil {
			return d.Errf("fulfilment_gateway: %s is given twice", job)
		}
		*raw = caddyconfig.JSONModuleObject(mod, "handler", "fulfilment_"+job, nil)
	}
	if h.AuthRaw == nil {
		return d.Err("fulfilment_gateway needs the Bearer guard: add an auth line")
	}
	if h.VersionRaw == nil {
		return d.Err("fulfilment_gateway needs a version block (the resources and versions partners may reach)")
	}
	return nil
}
