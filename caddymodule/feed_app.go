package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// FeedConfig is one "feed <name> { ... }" block of the fulfilment app.
// (Filled in by the change-feed work.)
type FeedConfig struct {
	Name string `json:"name"`
}

// UnmarshalCaddyfile parses "feed <name> { ... }"; d is positioned on "feed".
func (c *FeedConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "feed"
	if !d.NextArg() {
		return d.ArgErr()
	}
	c.Name = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		return d.Errf("unknown feed option %q", d.Val())
	}
	return nil
}

func (a *App) provisionFeeds(ctx caddy.Context) error { return nil }

func (a *App) startFeeds(st *sharedState) error { return nil }
