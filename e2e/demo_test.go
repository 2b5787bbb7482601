package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The repository's own demo Caddyfile end to end, as the README's tour
// drives it: a demo partner gets a token and subscribes, a change made in the
// simulator becomes a signed webhook at the partner's receiver. Then the demo
// is stopped and started again on the same data dir (its simulator's
// warehouse starts afresh, in memory): the token still works (the signing
// key is kept in the data dir), the feed reads on without a reset, and only
// the new change is delivered, not the earlier one again.
func TestDemoEndToEndAcrossRestart(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	rcv := startGoReceiver(t, "DEMO-ONLY-acme-webhook-key-0123456789abcdef")
	auth := gatewayHeaders(t, g.Base)

	sub := fmt.Sprintf(`{"notificationUrl":%q,"event":"outbound-status"}`, rcv.URL)
	status, h, b := do(t, http.MethodPost, g.Base+"/api/fulfilment/v4/subscriptions", strings.NewReader(sub),
		append([]string{"Content-Type", "application/json"}, auth...)...)
	if status != http.StatusCreated || h.Get("Location") == "" {
		t.Fatalf("subscribing: %d %s", status, b)
	}

	createOutbound := func() string {
		t.Helper()
		status, _, b := do(t, http.MethodPost, g.WMS+"/wms/_control/outbounds",
			strings.NewReader(`{"partner":"partner-acme"}`), "Content-Type", "application/json")
		_, rest, ok := strings.Cut(string(b), `"id":"`)
		id, _, _ := strings.Cut(rest, `"`)
		if status != http.StatusCreated || !ok || id == "" {
			t.Fatalf("creating an outbound: %d %s", status, b)
		}
		return id
	}
	want := map[string]int{}
	want["outbound.status-changed "+createOutbound()]++
	waitExact(t, rcv, "before the restart", want, 20*time.Second)

	g.Stop()
	g.Restart()
	waitHTTP(t, g.WMS+"/wms")
	status, _, b = do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/subscriptions", nil, auth...)
	if status != http.StatusOK || !strings.Contains(string(b), rcv.URL) {
		t.Fatalf("the token or the subscription did not survive the restart: %d %s", status, b)
	}
	want["outbound.status-changed "+createOutbound()]++
	waitExact(t, rcv, "after the restart", want, 20*time.Second)
	if logs := g.Logs.String(); strings.Contains(logs, "INVALID-CURSOR") {
		t.Fatalf("the feed refused its stored cursor after the restart:\n%s", logs)
	}
}
