package fulfilhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// requestOf returns a request whose Caddy vars hold partner's verified
// identity, as the guard leaves them (none if partner is empty).
func requestOf(partner string) *http.Request {
	r := httptest.NewRequest("GET", "/api/fulfilment/v4/shipments", nil)
	vars := map[string]any{}
	if partner != "" {
		id := testHeaders().Verified(partner)
		vars[PartnerIDVar] = &id
	}
	return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, vars))
}

// Counting a request, a guard refusal or a token answer allocates nothing
// once the version and partner pair was seen.
func TestGatewayMetricsAllocateNothingPerRequest(t *testing.T) {
	m := Metrics()
	r := requestOf("partner-alloc")
	m.Request("v4", r) // first sight of the pair creates its child
	for name, count := range map[string]func(){
		"request":       func() { m.Request("v4", r) },
		"guard refusal": func() { m.GuardRefusal(tokens.FaultInvalid) },
		"token answer":  func() { m.TokenAnswer(http.StatusUnauthorized, "invalid_client", false) },
		"WMS error":     func() { m.WMSError(true) },
	} {
		if n := testing.AllocsPerRun(100, count); n != 0 {
			t.Errorf("counting a %s allocates %v times, want 0", name, n)
		}
	}
}

func TestGatewayMetricsCountByLabel(t *testing.T) {
	m := Metrics()
	val := func(c prometheus.Counter) float64 {
		var out dto.Metric
		if err := c.Write(&out); err != nil {
			t.Fatal(err)
		}
		return out.GetCounter().GetValue()
	}
	v3acme := m.requests.WithLabelValues("v3", "partner-count")
	v4acme := m.requests.WithLabelValues("v4", "partner-count")
	v3none := m.requests.WithLabelValues("v3", "none")
	b3, b4, bn := val(v3acme), val(v4acme), val(v3none)
	m.Request("v3", requestOf("partner-count"))
	m.Request("v3", requestOf("partner-count"))
	m.Request("v4", requestOf("partner-count"))
	m.Request("v3", requestOf(""))
	if val(v3acme)-b3 != 2 || val(v4acme)-b4 != 1 || val(v3none)-bn != 1 {
		t.Fatalf("requests by version and partner: v3 %v, v4 %v, v3 without partner %v; want 2, 1, 1",
			val(v3acme)-b3, val(v4acme)-b4, val(v3none)-bn)
	}

	for _, c := range []struct {
		status int
		code   string
		reused bool
		result string
	}{
		{200, "", false, "issued"}, {200, "", true, "reused"}, {429, "slow_down", false, "throttled"},
		{401, "invalid_client", false, "invalid_client"}, {400, "unsupported_grant_type", false, "unsupported_grant_type"},
		{405, "invalid_request", false, "method_not_allowed"}, {413, "invalid_request", false, "too_large"},
		{503, "temporarily_unavailable", false, "unavailable"}, {500, "server_error", false, "server_error"},
	} {
		child := m.tokenVec.WithLabelValues(c.result)
		before := val(child)
		m.TokenAnswer(c.status, c.code, c.reused)
		if val(child)-before != 1 {
			t.Errorf("token answer %d %q (reused %v): result %q not counted", c.status, c.code, c.reused, c.result)
		}
	}

	for f, labels := range map[tokens.Fault][2]string{
		tokens.FaultMissing: {"401", "missing"}, tokens.FaultInvalid: {"401", "invalid"}, tokens.FaultExpired: {"403", "expired"},
	} {
		child := m.guardVec.WithLabelValues(labels[0], labels[1])
		before := val(child)
		m.GuardRefusal(f)
		if val(child)-before != 1 {
			t.Errorf("guard refusal %v: %s %s not counted", f, labels[0], labels[1])
		}
	}
}

// A request counts for the partner the guard verified, never for a string a
// vars or map directive put in the same variable.
func TestRequestMetricsCountOnlyTheVerifiedPartner(t *testing.T) {
	m := Metrics()
	val := func(c prometheus.Counter) float64 {
		var out dto.Metric
		if err := c.Write(&out); err != nil {
			t.Fatal(err)
		}
		return out.GetCounter().GetValue()
	}
	spoofed := m.requests.WithLabelValues("v4", "partner-spoofed")
	none := m.requests.WithLabelValues("v4", "none")
	bs, bn := val(spoofed), val(none)
	r := requestOf("")
	caddyhttp.SetVar(r.Context(), PartnerIDVar, "partner-spoofed")
	m.Request("v4", r)
	if val(spoofed)-bs != 0 || val(none)-bn != 1 {
		t.Fatalf("a plain string variable counted for %q %v times, none %v times; want 0 and 1", "partner-spoofed", val(spoofed)-bs, val(none)-bn)
	}
}

// Requests of new version and partner pairs counted at once, while other
// goroutines count pairs already seen, each reach their own child once per
// call: a pair's first sight neither loses another's nor races with the
// readers (run with -race).
func TestRequestsOfNewPairsCountedConcurrently(t *testing.T) {
	m := Metrics()
	const goroutines, partners, rounds = 6, 12, 25
	versions := []string{"v3", "v4", "v9-concurrent"}
	counted := func() (total float64) {
		for _, v := range versions {
			for p := range partners {
				var out dto.Metric
				if err := m.requests.WithLabelValues(v, fmt.Sprintf("partner-conc-%d", p)).Write(&out); err != nil {
					t.Fatal(err)
				}
				total += out.GetCounter().GetValue()
			}
		}
		return total
	}
	before := counted() // the counters are the process's: other runs counted too
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds * partners {
				p := testHeaders().Verified(fmt.Sprintf("partner-conc-%d", (i+g)%partners))
				m.RequestBy(versions[i%len(versions)], p)
			}
		})
	}
	wg.Wait()
	total, want := counted()-before, float64(goroutines*rounds*partners)
	if total != want {
		t.Fatalf("%v requests counted over the pairs, want %v", total, want)
	}
}
