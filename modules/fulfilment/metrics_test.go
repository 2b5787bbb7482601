package fulfilment

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// gatheredValue returns the value of the series name{labels} gathered from
// reg (counter, gauge, or a histogram's sample count), and whether it exists.
func gatheredValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

// The same collectors go into each config load's new registry, and their
// values carry over: a reload does not reset the counters.
func TestWebhookMetricsSurviveNewRegistries(t *testing.T) {
	m := whMetrics()
	first := prometheus.NewPedanticRegistry()
	if err := registerWebhookMetrics(first); err != nil {
		t.Fatal(err)
	}
	if err := registerWebhookMetrics(first); err != nil {
		t.Fatalf("registering twice into one registry: %v", err)
	}
	lbl := map[string]string{"event": "label-status", "outcome": "success"}
	m.Delivery("label-status", webhooks.OutcomeSuccess)
	before, ok := gatheredValue(t, first, "fulfilgate_webhooks_deliveries_total", lbl)
	if !ok {
		t.Fatal("no deliveries series in the first registry")
	}
	m.Depth(7, 2)

	second := prometheus.NewPedanticRegistry() // a reload
	if err := registerWebhookMetrics(second); err != nil {
		t.Fatal(err)
	}
	m.Delivery("label-status", webhooks.OutcomeSuccess)
	got, _ := gatheredValue(t, second, "fulfilgate_webhooks_deliveries_total", lbl)
	if got != before+1 {
		t.Fatalf("deliveries after reload = %v, want %v", got, before+1)
	}
	if v, _ := gatheredValue(t, second, "fulfilgate_webhooks_queue_depth", nil); v != 7 {
		t.Fatalf("queue depth = %v, want 7", v)
	}
	if v, _ := gatheredValue(t, second, "fulfilgate_webhooks_dead_letters", nil); v != 2 {
		t.Fatalf("dead letters = %v, want 2", v)
	}
}

// A collector of the same name that is not ours is a real conflict.
func TestWebhookMetricsConflict(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "fulfilgate_webhooks_queue_depth", Help: "x"})
	reg.MustRegister(other)
	if err := registerWebhookMetrics(reg); err == nil {
		t.Fatal("a foreign collector with our name was not reported")
	}
	if err := registerWebhookMetrics(nil); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookMetricsAttempt(t *testing.T) {
	for _, tt := range []struct {
		status int
		class  string
	}{{200, "2xx"}, {204, "2xx"}, {302, "3xx"}, {404, "4xx"}, {503, "5xx"}, {0, "error"}, {99, "error"}, {600, "error"}} {
		if got := statusClass(tt.status); got != tt.class {
			t.Errorf("statusClass(%d) = %q, want %q", tt.status, got, tt.class)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	if err := registerWebhookMetrics(reg); err != nil {
		t.Fatal(err)
	}
	m := whMetrics()
	before, _ := gatheredValue(t, reg, "fulfilgate_webhooks_attempts_total", map[string]string{"code": "5xx"})
	beforeLat, _ := gatheredValue(t, reg, "fulfilgate_webhooks_attempt_duration_seconds", map[string]string{"code": "5xx"})
	m.Attempt(120*time.Millisecond, 503)
	if got, _ := gatheredValue(t, reg, "fulfilgate_webhooks_attempts_total", map[string]string{"code": "5xx"}); got != before+1 {
		t.Fatalf("attempts{5xx} = %v, want %v", got, before+1)
	}
	if got, _ := gatheredValue(t, reg, "fulfilgate_webhooks_attempt_duration_seconds", map[string]string{"code": "5xx"}); got != beforeLat+1 {
		t.Fatalf("latency samples{5xx} = %v, want %v", got, beforeLat+1)
	}
}
