package wmssim

import (
	"errors"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("wms_simulator", parseCaddyfile)
	// Terminal, like reverse_proxy; runs after the gateway's own handlers.
	httpcaddyfile.RegisterDirectiveOrder("wms_simulator", httpcaddyfile.Before, "reverse_proxy")
}

var errNameTooLong = errors.New("wms_simulator: name longer than 128 characters")

// parseCaddyfile builds the handler from the wms_simulator directive.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	wms_simulator [<matcher>] [<name>] {
//	    name <name>      # which warehouse; default "default"
//	    seed on|off      # demo items on creation; default on
//	}
//
// The name may be given as the one argument or in the block, not both.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		h.Name = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "name":
			if h.Name != "" {
				return d.Err("name already set")
			}
			if !d.NextArg() {
				return d.ArgErr()
			}
			h.Name = d.Val()
			if d.NextArg() {
				return d.ArgErr()
			}
		case "seed":
			if !d.NextArg() {
				return d.ArgErr()
			}
			var on bool
			switch d.Val() {
			case "on", "true", "yes":
				on = true
			case "off", "false", "no":
			default:
				return d.Errf("seed must be on or off, not %q", d.Val())
			}
			h.Seed = &on
			if d.NextArg() {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized wms_simulator option %q", d.Val())
		}
	}
	if len(h.Name) > 128 {
		return d.Err(errNameTooLong.Error())
	}
	return nil
}

// Interface guards
var _ caddyfile.Unmarshaler = (*Handler)(nil)
