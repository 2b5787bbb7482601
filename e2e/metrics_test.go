package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// metricValue reads one sample (name with its labels, as Prometheus writes
// them) from the admin API's /metrics; -1 if it is not there.
func metricValue(t *testing.T, admin, sample string) float64 {
	t.Helper()
	_, _, body := do(t, "GET", "http://"+admin+"/metrics", nil)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %q", sample, line)
			}
			return f
		}
	}
	return -1
}

// The token endpoint, the guard and the versioned requests are counted:
// issued and refused tokens by result, guard refusals by reason, requests
// by version and partner (who still calls the deprecated v3), WMS errors.
func TestRequestPathMetrics(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	samples := []string{
		`fulfilgate_token_requests_total{result="issued"}`,
		`fulfilgate_token_requests_total{result="invalid_client"}`,
		`fulfilgate_token_requests_total{result="throttled"}`,
		`fulfilgate_guard_refusals_total{reason="missing",status="401"}`,
		`fulfilgate_guard_refusals_total{reason="invalid",status="401"}`,
		`fulfilgate_guard_refusals_total{reason="expired",status="403"}`,
		`fulfilgate_requests_total{partner="partner-acme",version="v4"}`,
		`fulfilgate_requests_total{partner="partner-acme",version="v3"}`,
		`fulfilgate_wms_errors_total{kind="error_status"}`,
		`fulfilgate_wms_errors_total{kind="no_answer"}`,
	}
	before := map[string]float64{}
	for _, m := range samples {
		before[m] = max(metricValue(t, g.Admin, m), 0) // a series not there yet is 0
	}
	auth := gatewayHeaders(t, g.Base) // one token issued
	bad, _, _ := do(t, "POST", g.Base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"),
		"Authorization", basicAuth(demoClientID, "wrong-secret"), "Content-Type", "application/x-www-form-urlencoded")
	if bad != http.StatusUnauthorized {
		t.Fatalf("token with a wrong secret: %d, want 401", bad)
	}
	do(t, "GET", g.Base+"/api/fulfilment/v4/shipments", nil)                                     // 401 missing
	do(t, "GET", g.Base+"/api/fulfilment/v4/shipments", nil, "Authorization", "Bearer nonsense") // 401 invalid
	for range 3 {
		do(t, "GET", g.Base+"/api/fulfilment/v4/shipments", nil, auth...)
	}
	do(t, "GET", g.Base+"/api/fulfilment/v3/shipments", nil, auth...)
	do(t, "POST", g.WMS+"/wms/_control/outage", strings.NewReader(`{"seconds":30}`), "Content-Type", "application/json")
	if s, _, _ := do(t, "GET", g.Base+"/api/fulfilment/v4/labels", nil, auth...); s != http.StatusServiceUnavailable {
		t.Fatalf("during the WMS outage: %d, want 503", s)
	}

	for i, want := range []float64{1, 1, 0, 1, 1, 0, 4, 1, 1, 0} {
		if got := metricValue(t, g.Admin, samples[i]) - before[samples[i]]; got != want {
			t.Errorf("%s went up by %v, want %v", samples[i], got, want)
		}
	}
}

// A WMS that cannot be reached is counted, and the log line of the failure
// carries the request id the partner got in X-Request-Id.
func TestUnreachableWMSIsCountedAndLoggedWithTheRequestID(t *testing.T) {
	t.Parallel()
	closed := freePort(t)
	cf := strings.Replace(repoCaddyfile(t), "reverse_proxy 127.0.0.1:{$WMS_PORT:8081} {",
		fmt.Sprintf("reverse_proxy 127.0.0.1:%d {", closed), 1)
	g := startRepoGateway(t, cf)
	status, h, body := do(t, "GET", g.Base+"/api/fulfilment/v4/shipments", nil, gatewayHeaders(t, g.Base)...)
	rid := h.Get("X-Request-Id")
	if status != http.StatusBadGateway || rid == "" {
		t.Fatalf("with the WMS unreachable: %d %s, X-Request-Id %q; want 502 with a request id", status, body, rid)
	}
	if got := metricValue(t, g.Admin, `fulfilgate_wms_errors_total{kind="no_answer"}`); got != 1 {
		t.Errorf(`fulfilgate_wms_errors_total{kind="no_answer"} = %v, want 1`, got)
	}
	whEventually(t, whTimeout, "the failure's log line", func() bool {
		for _, line := range strings.Split(g.Logs.String(), "\n") {
			var entry struct {
				Msg       string `json:"msg"`
				RequestID string `json:"request_id"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "upstream request failed" {
				if entry.RequestID != rid {
					t.Fatalf("the log line of the failure has request_id %q, want %q (the partner's X-Request-Id):\n%s", entry.RequestID, rid, line)
				}
				return true
			}
		}
		return false
	})
}
