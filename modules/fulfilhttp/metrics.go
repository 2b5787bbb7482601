package fulfilhttp

import (
	"maps"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fulfilgate/fulfilgate/internal/metrics"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// RequestMetrics are the Prometheus collectors of the request path: the
// token endpoint, the Bearer guard, the versioned requests and the WMS's
// errors. Like the webhook metrics they are created once per process and
// registered into the registry of every config load (by the Provision of
// each of the gateway's handlers), so counters continue across reloads.
//
//	fulfilgate_token_requests_total{result}          token endpoint answers: issued, reused,
//	                                                  throttled, invalid_client, invalid_request,
//	                                                  unsupported_grant_type, method_not_allowed,
//	                                                  too_large, unavailable, server_error
//	fulfilgate_guard_refusals_total{status,reason}   Bearer guard refusals: 401 missing, 401 invalid,
//	                                                  403 expired, 503 unavailable
//	fulfilgate_requests_total{version,partner}       requests mapped by the version handler, by the
//	                                                  version and the authenticated partner ("none")
//	fulfilgate_wms_errors_total{kind}                WMS failures on proxied requests: error_status
//	                                                  (the WMS answered 5xx), no_answer (it could not
//	                                                  be reached or timed out)
//
// Counting allocates nothing on the request path: the children of fixed
// label sets are created up front, and those of the version and partner
// pairs are kept in a copy-on-write map read without a lock.
type RequestMetrics struct {
	tokenVec  *prometheus.CounterVec
	tokens    map[string]prometheus.Counter // result → child
	guardVec  *prometheus.CounterVec
	guard     map[tokens.Fault]prometheus.Counter
	guard503  prometheus.Counter
	requests  *prometheus.CounterVec
	perPair   atomic.Pointer[map[string]map[string]prometheus.Counter] // version → partner → child
	pairMu    sync.Mutex
	wmsVec    *prometheus.CounterVec
	wmsStatus prometheus.Counter
	wmsNone   prometheus.Counter
}

// tokenResults are the values of fulfilgate_token_requests_total's label.
var tokenResults = []string{"issued", "reused", "throttled", "invalid_client", "invalid_request",
	"unsupported_grant_type", "method_not_allowed", "too_large", "unavailable", "server_error"}

// Metrics returns the process's request-path collectors.
var Metrics = sync.OnceValue(func() *RequestMetrics {
	m := &RequestMetrics{
		tokenVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "token",
			Name: "requests_total",
			Help: "Answers of the token endpoint: issued (a new token), reused (the client's current token), " +
				"throttled (429), or the OAuth error refused with.",
		}, []string{"result"}),
		guardVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "guard",
			Name: "refusals_total",
			Help: "Requests the Bearer guard refused, by status and reason: 401 missing, 401 invalid " +
				"(bad, revoked, of a disabled client or partner), 403 expired, 503 unavailable.",
		}, []string{"status", "reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace,
			Name: "requests_total",
			Help: "Partner requests mapped onto the WMS, by interface version and authenticated partner " +
				"(\"none\" without the guard): who still calls a deprecated version.",
		}, []string{"version", "partner"}),
		wmsVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "wms",
			Name: "errors_total",
			Help: "Proxied requests the WMS failed: error_status (it answered 5xx), no_answer (it could not be reached or timed out).",
		}, []string{"kind"}),
		tokens: map[string]prometheus.Counter{},
	}
	for _, r := range tokenResults {
		m.tokens[r] = m.tokenVec.WithLabelValues(r)
	}
	m.guard = map[tokens.Fault]prometheus.Counter{
		tokens.FaultMissing: m.guardVec.WithLabelValues("401", "missing"),
		tokens.FaultInvalid: m.guardVec.WithLabelValues("401", "invalid"),
		tokens.FaultExpired: m.guardVec.WithLabelValues("403", "expired"),
	}
	m.guard503 = m.guardVec.WithLabelValues("503", "unavailable")
	m.wmsStatus = m.wmsVec.WithLabelValues("error_status")
	m.wmsNone = m.wmsVec.WithLabelValues("no_answer")
	m.perPair.Store(&map[string]map[string]prometheus.Counter{})
	return m
})

// TokenAnswer counts an answer of the token endpoint by its status and
// OAuth error code (reused tells a success that handed out the current
// token).
func (m *RequestMetrics) TokenAnswer(status int, code string, reused bool) {
	r := code
	switch {
	case status == http.StatusOK && reused:
		r = "reused"
	case status == http.StatusOK:
		r = "issued"
	case status == http.StatusTooManyRequests:
		r = "throttled"
	case status == http.StatusMethodNotAllowed:
		r = "method_not_allowed"
	case status == http.StatusRequestEntityTooLarge:
		r = "too_large"
	case status == http.StatusServiceUnavailable:
		r = "unavailable"
	}
	if c, ok := m.tokens[r]; ok {
		c.Inc()
	} else {
		m.tokens["server_error"].Inc()
	}
}

// GuardRefusal counts a refusal of the Bearer guard.
func (m *RequestMetrics) GuardRefusal(f tokens.Fault) {
	if c, ok := m.guard[f]; ok {
		c.Inc()
	} else {
		m.guard[tokens.FaultInvalid].Inc()
	}
}

// Request counts a request of version by the partner the guard verified
// for r ("none" without one).
func (m *RequestMetrics) Request(version string, r *http.Request) {
	p, _ := VerifiedFromRequest(r)
	m.RequestBy(version, p)
}

// RequestBy counts a request of version by p, an identity the guard
// verified ("none" for the zero value): for a handler that holds it already.
func (m *RequestMetrics) RequestBy(version string, p VerifiedPartner) {
	partner := p.id
	if partner == "" || p.headers == nil {
		partner = "none"
	}
	// Two string-keyed look-ups: cheaper than one keyed by the pair, whose
	// hashing is the generic kind, on every request the gateway forwards.
	if c, ok := (*m.perPair.Load())[version][partner]; ok {
		c.Inc()
		return
	}
	m.pairMu.Lock()
	old := *m.perPair.Load()
	c, ok := old[version][partner]
	if !ok {
		c = m.requests.WithLabelValues(version, partner)
		partners := maps.Clone(old[version])
		if partners == nil {
			partners = map[string]prometheus.Counter{}
		}
		partners[partner] = c
		next := maps.Clone(old)
		next[version] = partners
		m.perPair.Store(&next)
	}
	m.pairMu.Unlock()
	c.Inc()
}

// GuardUnavailable counts a request the guard refused with 503: the
// fulfilment app was not running.
func (m *RequestMetrics) GuardUnavailable() { m.guard503.Inc() }

// WMSError counts a WMS failure: an error status it answered, or none.
func (m *RequestMetrics) WMSError(answered bool) {
	if answered {
		m.wmsStatus.Inc()
	} else {
		m.wmsNone.Inc()
	}
}

func (m *RequestMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.tokenVec, m.guardVec, m.requests, m.wmsVec}
}

// RegisterMetrics registers the process's request-path collectors into
// reg (the registry of one config load). Every handler of the gateway
// calls it, so the series are there whichever handlers a config has.
func RegisterMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, Metrics().collectors()...)
}
