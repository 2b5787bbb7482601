package caddymodule

import (
	"runtime/debug"

	"github.com/caddyserver/caddy/v2"
)

const gatewayModulePath = "github.com/fulfilgate/fulfilgate"

// webhooksGatewayVersion is the version of the gateway module in this binary
// (from the build info), or "dev" for a build from a working tree.
func webhooksGatewayVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := ""
	if bi.Main.Path == gatewayModulePath {
		v = bi.Main.Version
	}
	for _, dep := range bi.Deps {
		if dep.Path == gatewayModulePath {
			v = dep.Version
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

// provisionWebhooks checks the webhooks block and fills in its defaults.
func (a *App) provisionWebhooks(ctx caddy.Context) error {
	cfg, err := a.Webhooks.withDefaults()
	if err != nil {
		return err
	}
	a.Webhooks = cfg
	return nil
}

func (a *App) startWebhooks(st *sharedState) error { return nil }
