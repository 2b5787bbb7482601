// Package cfgcheck checks a benchmark's Caddyfile the way the gateway does
// at load: adapted, then validated (every app provisioned, the fulfilment
// app's route check included), so that a benchmark whose gateway would
// refuse its configuration fails `go test ./bench/...` instead of a run.
package cfgcheck

import (
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/fulfilgate/fulfilgate"        // the gateway's modules
	_ "github.com/fulfilgate/fulfilgate/wmssim" // the WMS simulator
)

// Validate adapts caddyfile and validates the result as `caddy validate`
// does; it returns the adapter's or the gateway's refusal.
func Validate(caddyfile string) error {
	raw, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
	if err != nil {
		return fmt.Errorf("adapting: %w", err)
	}
	var cfg caddy.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("decoding the adapted configuration: %w", err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		return fmt.Errorf("validating: %w", err)
	}
	return nil
}
