package fulfilhttp

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// LoadApp is the part of every gateway handler's Provision that they
// share: it registers the request-path metrics into the registry of ctx's
// config and returns that config's fulfilment app (fulfilment.FromContext),
// whose running parts the handler reaches at request time through the
// app's accessors.
func LoadApp(ctx caddy.Context) (*fulfilment.App, error) {
	if err := RegisterMetrics(ctx.GetMetricsRegistry()); err != nil {
		return nil, fmt.Errorf("registering the request metrics: %w", err)
	}
	return fulfilment.FromContext(ctx)
}
