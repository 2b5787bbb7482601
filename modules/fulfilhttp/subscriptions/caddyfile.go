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
	return fulfilhttp.UnmarshalReadTimeoutOnly(d, &s.ReadTimeout, "")
}
