package tokenauth

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("fulfilment_token", parseTokenHandler)
	httpcaddyfile.RegisterHandlerDirective("fulfilment_auth", parseAuthHandler)
}

func parseAuthHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	a := new(AuthHandler)
	return a, a.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile parses the fulfilment_auth directive:
//
//	fulfilment_auth [<identity_header>] {
//		identity_header <name>   # default X-Partner-Id
//		strip_header <name>...   # repeatable; more headers removed
//		realm <realm>            # default fulfilment
//		request_id_header <name> # default X-Request-Id
//	}
func (h *AuthHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		h.IdentityHeader = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "identity_header":
			if err := caddyfileargs.String(d, &h.IdentityHeader); err != nil {
				return err
			}
		case "strip_header":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			h.StripHeaders = append(h.StripHeaders, args...)
		case "request_id_header":
			if err := caddyfileargs.String(d, &h.RequestIDHeader); err != nil {
				return err
			}
		case "realm":
			if err := caddyfileargs.String(d, &h.Realm); err != nil {
				return err
			}
		default:
			return d.Errf("unknown fulfilment_auth option %q", d.Val())
		}
	}
	return nil
}

var _ caddyfile.Unmarshaler = (*AuthHandler)(nil)

// parseTokenHandler parses the directive:
//
//	fulfilment_token [<matcher>] {
//		path <path>               # answer only this path, pass on the rest; default: answer every request
//		read_timeout <duration>   # wait for the request body; default 10s
//	}
func parseTokenHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	th := new(TokenHandler)
	return th, th.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile parses `fulfilment_token` (syntax above). Token
// settings and partners are configured in the fulfilment global option.
func (h *TokenHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "path":
			err = caddyfileargs.String(d, &h.Path)
		case "read_timeout":
			h.ReadTimeout, err = fulfilhttp.ParseReadTimeout(d, h.ReadTimeout)
		default:
			err = d.Errf("unknown fulfilment_token option %q (tokens are configured in the fulfilment global option)", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
