// Package metrics holds what the gateway's Prometheus collectors share: the
// namespace of their names and their registration. Caddy gives each config
// load a new registry, while the gateway's collectors are created once per
// process (the parts they count outlive reloads): registering the same
// instances into each new registry keeps the counters continuous across
// reloads, as mholt/caddy-ratelimit does.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes the name of every metric of the gateway.
const Namespace = "fulfilgate"

// Register registers cs into reg (the registry of one config load; nil
// registers nothing). A collector already registered there is not an error.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) && are.ExistingCollector == c {
				continue
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
