package fulfilment

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/internal/metrics"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// webhookMetrics are the Prometheus collectors of webhook delivery, created
// once per process and registered into the registry of every config load
// (internal/metrics), since the dispatcher, and so the counts, outlive
// reloads.
type webhookMetrics struct {
	deliveries *prometheus.CounterVec   // finished attempts by event and outcome
	attempts   *prometheus.CounterVec   // HTTP attempts by status class
	latency    *prometheus.HistogramVec // duration of one attempt, by status class
	queued     prometheus.Gauge         // deliveries waiting in the queue
	dead       prometheus.Gauge         // dead deliveries kept for replay
}

const metricsSubsystem = "webhooks"

var whMetrics = sync.OnceValue(func() *webhookMetrics {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: metrics.Namespace, Subsystem: metricsSubsystem, Name: name, Help: help}
	}
	return &webhookMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts(opts("deliveries_total",
			"Webhook delivery attempts by event and outcome: success (delivered, left the queue), "+
				"failure (retry scheduled), dead (limits reached, kept as dead), dropped (subscription deleted).")),
			[]string{"event", "outcome"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts(opts("attempts_total",
			"Webhook HTTP attempts by answer: 2xx, 3xx, 4xx, 5xx, or error (connection error, time-out, refused address).")),
			[]string{"code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metrics.Namespace, Subsystem: metricsSubsystem, Name: "attempt_duration_seconds",
			Help:    "Duration of one webhook HTTP attempt, from dial to the receiver's answer, by answer.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"code"}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts(opts("queue_depth",
			"Webhook deliveries waiting in the queue (due now or later)."))),
		dead: prometheus.NewGauge(prometheus.GaugeOpts(opts("dead_letters",
			"Dead webhook deliveries kept for listing and replay."))),
	}
})

// collectors lists every collector, for registration.
func (m *webhookMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.deliveries, m.attempts, m.latency, m.queued, m.dead}
}

// Delivery implements webhooks.Observer.
func (m *webhookMetrics) Delivery(event string, outcome webhooks.Outcome) {
	m.deliveries.WithLabelValues(event, string(outcome)).Inc()
}

// Attempt implements webhooks.Observer.
func (m *webhookMetrics) Attempt(latency time.Duration, status int) {
	code := statusClass(status)
	m.attempts.WithLabelValues(code).Inc()
	m.latency.WithLabelValues(code).Observe(latency.Seconds())
}

// Depth implements webhooks.Observer.
func (m *webhookMetrics) Depth(queued, dead int64) {
	m.queued.Set(float64(queued))
	m.dead.Set(float64(dead))
}

// statusClass is the label of an HTTP status: "2xx".."5xx", or "error" for
// no answer (status 0) or a status out of range.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}

// registerWebhookMetrics registers the process's webhook collectors into
// reg (the registry of one config load).
func registerWebhookMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, whMetrics().collectors()...)
}

// Interface guards
var _ webhooks.Observer = (*webhookMetrics)(nil)
