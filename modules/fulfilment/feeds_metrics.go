package fulfilment

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/internal/metrics"
)

// feedCollector exports the feed readers' counters and lag. It reads them
// from the running readers at each scrape, so one collector instance
// (created once per process) is registered into the registry of every config
// load and the values stay continuous across reloads, as the readers do.
//
//	fulfilgate_feed_changes_read_total{feed}       changes read (polled or pushed)
//	fulfilgate_feed_duplicate_changes_total{feed}  changes skipped as already done
//	fulfilgate_feed_events_produced_total{feed}    events produced from changes
//	fulfilgate_feed_deliveries_queued_total{feed}  deliveries queued (events × subscriptions)
//	fulfilgate_feed_rejected_changes_total{feed}   changes rejected (skipped as unusable)
//	fulfilgate_feed_poll_errors{feed}              consecutive failed polls (0 when healthy)
//	fulfilgate_feed_poll_errors_total{feed}        failed polls (an answer that is not a feed included)
//	fulfilgate_feed_lag_seconds{feed}              time since the reader last reached the feed's end
//	                                               (only from the instance that reads the feed)
//	fulfilgate_feed_reading{feed}                  1 when this instance holds the feed's lease, 0 when
//	                                               another does (only with a shared database)
type feedCollector struct {
	read, dup, events, deliveries, rejected, errors, errorsTotal, lag, reading *prometheus.Desc
}

var feedMetrics = sync.OnceValue(func() *feedCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "feed", name), help, []string{"feed"}, nil)
	}
	return &feedCollector{
		read:       d("changes_read_total", "Upstream changes read, polled or pushed."),
		dup:        d("duplicate_changes_total", "Upstream changes skipped because they were already turned into events."),
		events:     d("events_produced_total", "Partner events produced from upstream changes."),
		deliveries: d("deliveries_queued_total", "Webhook deliveries queued from upstream changes (events times matching subscriptions)."),
		rejected:   d("rejected_changes_total", "Upstream changes rejected (unknown kind or partner, missing id or entity, wrong types)."),
		errors:     d("poll_errors", "Consecutive failed polls of the feed (0 when healthy)."),
		errorsTotal: d("poll_errors_total", "Failed polls of the feed: no answer, an error status, or an answer that is not a feed page "+
			"(not JSON, HTML or XML, no \"changes\" array). Waiting for the feed at start-up is not counted."),
		lag: d("lag_seconds", "Seconds since the start of the last poll that reached the end of the feed."),
		reading: d("reading", "1 when this gateway instance holds the feed's lease and reads it, 0 when another instance does "+
			"(only with a database several instances share)."),
	}
})

// Describe implements prometheus.Collector.
func (c *feedCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.read, c.dup, c.events, c.deliveries, c.rejected, c.errors, c.errorsTotal, c.lag, c.reading} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *feedCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	liveFeedSets.Range(func(k, _ any) bool {
		for _, f := range k.(*feedSet).list() {
			st := f.Status()
			if seen[st.Name] { // two data dirs with the same feed name: first wins
				continue
			}
			seen[st.Name] = true
			counter := func(d *prometheus.Desc, v uint64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), st.Name)
			}
			counter(c.read, st.ChangesRead)
			counter(c.dup, st.Duplicates)
			counter(c.events, st.EventsProduced)
			counter(c.deliveries, st.DeliveriesQueued)
			counter(c.rejected, st.RejectedChanges)
			counter(c.errorsTotal, st.PollErrors)
			ch <- prometheus.MustNewConstMetric(c.errors, prometheus.GaugeValue, float64(st.ConsecutiveErrors), st.Name)
			reads := st.ReaderStatus == nil || st.ReaderHere
			if st.Mode == "poll" && reads {
				ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, st.LagSeconds, st.Name)
			}
			if st.Mode == "poll" && st.ReaderStatus != nil {
				v := 0.0
				if reads {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(c.reading, prometheus.GaugeValue, v, st.Name)
			}
		}
		return true
	})
}

// registerFeedMetrics registers the feed collector into reg (the registry
// of one config load).
func registerFeedMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, feedMetrics())
}

// Interface guards
var _ prometheus.Collector = (*feedCollector)(nil)
