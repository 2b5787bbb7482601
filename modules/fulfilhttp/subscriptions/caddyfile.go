package subscriptions

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("fulfilment_subscriptions", parseSubscriptionsDirective)
}

// parseSubscriptionsDirective parses the directive:
//
//	fulfilment_subscriptions {
//		read_timeout <duration>   # wait for a POST body; default 10s
//	}
func parseSubscriptionsDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	s := new(SubscriptionsHandler)
	return s, s.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile parses "fulfilment_subscriptions" (syntax above).
func (s *SubscriptionsHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "read_timeout":
			var err error
			if s.ReadTimeout, err = fulfilhttp.ParseReadTimeout(d, s.ReadTimeout); err != nil {
				return err
			}
		default:
			return d.Errf("unknown fulfilment_subscriptions option %q", d.Val())
		}
	}
	return nil
}
