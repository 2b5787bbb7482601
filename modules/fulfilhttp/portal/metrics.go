package portal

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/internal/metrics"
)

// collectors are the portal's Prometheus counters, created once per
// process and registered into each config's registry, so they continue
// across reloads:
//
//	fulfilgate_portal_signins_total{outcome}         ok, invalid_link, error
//	fulfilgate_portal_actions_total{action,outcome}  every audited action (create_client,
//	                                                 rotate_client, revoke_client, sign_in,
//	                                                 sign_out, ...) and refused forms (csrf)
type collectors struct {
	signIns *prometheus.CounterVec
	actions *prometheus.CounterVec
}

var portalMetrics = sync.OnceValue(func() *collectors {
	return &collectors{
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "portal",
			Name: "signins_total", Help: "Sign-ins to the partner portal by outcome: ok, invalid_link (unknown, used or expired), error."},
			[]string{"outcome"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "portal",
			Name: "actions_total", Help: "Actions in the partner portal by action and outcome."},
			[]string{"action", "outcome"}),
	}
})

func (c *collectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.signIns, c.actions}
}

func (c *collectors) signIn(outcome string) { c.signIns.WithLabelValues(outcome).Inc() }

func (c *collectors) action(action, outcome string) { c.actions.WithLabelValues(action, outcome).Inc() }
