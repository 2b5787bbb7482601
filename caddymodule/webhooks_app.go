package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// WebhooksConfig is the "webhooks" block of the fulfilment app. (Filled in by the
// webhooks work.)
type WebhooksConfig struct{}

// UnmarshalCaddyfile parses the "webhooks { ... }" block of the fulfilment
// global option; d is positioned on the "webhooks" token.
func (c *WebhooksConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "webhooks"
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		return d.Errf("unknown webhooks option %q", d.Val())
	}
	return nil
}

func (a *App) provisionWebhooks(ctx caddy.Context) error { return nil }

func (a *App) startWebhooks(st *sharedState) error { return nil }
