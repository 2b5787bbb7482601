package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A partner that hangs up while the WMS is still working gets nothing
// written to its closed connection: the access log records Caddy's 499
// with no body, not a problem saying the WMS rejected the request. The
// WMS's request is cancelled with the partner's.
func TestAPartnerThatHangsUpIsLoggedAs499WithoutABody(t *testing.T) {
	t.Parallel()
	arrived, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(20 * time.Second):
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(slow.Close)

	const proxyLine = "reverse_proxy 127.0.0.1:{$WMS_PORT:8081} {"
	accessLog := filepath.Join(t.TempDir(), "access.log")
	demo := repoCaddyfile(t)
	cf := strings.Replace(demo, proxyLine, "reverse_proxy "+strings.TrimPrefix(slow.URL, "http://")+" {", 1)
	cf = strings.Replace(cf, "\tfulfilment_gateway {\n", "\tlog {\n\t\toutput file "+accessLog+"\n\t\tformat json\n\t}\n\n\tfulfilment_gateway {\n", 1)
	if strings.Count(demo, proxyLine) != 1 || !strings.Contains(cf, accessLog) {
		t.Fatal("the demo Caddyfile no longer has one proxy line and a fulfilment_gateway block: adapt this test")
	}
	g := startRepoGateway(t, cf)
	auth := gatewayHeaders(t, g.Base)

	const target = "/api/fulfilment/v4/products?hangs-up=1"
	noAnswer := metricValue(t, g.Admin, `fulfilgate_wms_errors_total{kind="no_answer"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.Base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(auth); i += 2 {
		req.Header.Set(auth[i], auth[i+1])
	}
	go func() { // the partner hangs up once the WMS has its request
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
		}
		cancel()
	}()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the gateway answered %d before the partner hung up; the request should have reached the slow WMS", resp.StatusCode)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the WMS's request was not cancelled within 10s of the partner hanging up (or never reached it)")
	}

	e := accessLogEntry(t, accessLog, target)
	if status, size := fmt.Sprint(e["status"]), fmt.Sprint(e["size"]); status != "499" || size != "0" {
		t.Errorf("the access log records status %s and %s bytes for a partner that hung up, want 499 and 0 (nothing written to a closed connection)", status, size)
	}
	if got := metricValue(t, g.Admin, `fulfilgate_wms_errors_total{kind="no_answer"}`); got != noAnswer {
		t.Errorf("fulfilgate_wms_errors_total{kind=\"no_answer\"} went from %v to %v: a partner hanging up is not a WMS failure", noAnswer, got)
	}
}
