package portal

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp" // the directive order
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("fulfilment_portal", parsePortalDirective)
}

// parsePortalDirective parses the fulfilment_portal directive:
//
//	fulfilment_portal {
//		prefix         <path>       # answer only under this path, pass on the rest; default: answer every request
//		session_idle   <duration>   # default 30m
//		session_max    <duration>   # default 12h, at most 168h
//		rotation_grace <duration>   # default 24h, at most 168h
//		max_clients    <n>          # default 10
//		token_url      <url>        # default: /api/auth/token on the portal's host
//	}
func parsePortalDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	ph := new(Handler)
	if err := ph.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return ph, nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler (syntax above).
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "prefix":
			err = caddyfileargs.String(d, &h.Prefix)
		case "session_idle":
			err = caddyfileargs.Duration(d, &h.SessionIdle)
		case "session_max":
			err = caddyfileargs.Duration(d, &h.SessionMax)
		case "rotation_grace":
			err = caddyfileargs.Duration(d, &h.RotationGrace)
		case "max_clients":
			err = caddyfileargs.PositiveInt(d, &h.MaxClients)
		case "token_url":
			err = caddyfileargs.String(d, &h.TokenURL)
		default:
			err = d.Errf("unknown fulfilment_portal option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var _ caddyfile.Unmarshaler = (*Handler)(nil)
