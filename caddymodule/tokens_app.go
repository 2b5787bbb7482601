package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TokensConfig is the "tokens" block of the fulfilment app. (Filled in by the
// tokens work.)
type TokensConfig struct{}

// UnmarshalCaddyfile parses the "tokens { ... }" block of the fulfilment
// global option; d is positioned on the "tokens" token.
func (c *TokensConfig) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume "tokens"
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		return d.Errf("unknown tokens option %q", d.Val())
	}
	return nil
}

func (a *App) provisionTokens(ctx caddy.Context) error { return nil }

func (a *App) startTokens(st *sharedState) error { return nil }
