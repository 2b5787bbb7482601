package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The gateway's own admin endpoint and servers are never a webhook target,
// even with the whole loopback network allowed (every port): a
// subscription to them is refused with the same 400 as any refused host,
// and the gateway keeps running.
func TestHostileSubscriptionToTheGatewayItself(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8 ::1")
	tok := g.token(t, "acme-client", whAcmeSecret)
	_, adminPort, _ := strings.Cut(g.Admin, ":")
	_, gwPort, _ := strings.Cut(strings.TrimPrefix(g.Base, "http://"), ":")
	var refusals []string
	for _, target := range []string{
		"http://" + g.Admin + "/stop",
		"http://" + g.Admin + "/fulfilment/keys/rotate",
		"http://localhost:" + adminPort + "/stop",
		"http://127.0.0.2:" + adminPort + "/stop",
		"http://[::1]:" + adminPort + "/stop",
		"http://0.0.0.0:" + adminPort + "/stop",
		"http://[::ffff:127.0.0.1]:" + adminPort + "/load",
		"http://127.0.0.1:" + gwPort + "/api/auth/token",
		"http://localhost:" + gwPort + "/api/fulfilment/v4/subscriptions",
	} {
		status, h, body := do(t, http.MethodPost, g.Base+"/api/fulfilment/v4/subscriptions",
			strings.NewReader(subBody(target, "label-status")),
			"Authorization", "Bearer "+tok, "Content-Type", "application/json")
		badField(t, "subscription to "+target, status, h, body, "notificationUrl")
		refusals = append(refusals, problemDetail(body))
	}
	// The same answer as for an address the policy refuses anyway.
	status, _, body := do(t, http.MethodPost, g.Base+"/api/fulfilment/v4/subscriptions",
		strings.NewReader(subBody("https://10.0.0.1/", "label-status")),
		"Authorization", "Bearer "+tok, "Content-Type", "application/json")
	if status != http.StatusBadRequest {
		t.Fatalf("a private address: %d %s, want 400", status, body)
	}
	if slices.ContainsFunc(refusals, func(r string) bool { return r != problemDetail(body) }) {
		t.Errorf("refusals of the gateway's own listeners %q differ from a refused private address's %q", refusals, problemDetail(body))
	}
	if status, _, _ := do(t, http.MethodGet, "http://"+g.Admin+"/config/", nil); status != http.StatusOK {
		t.Fatalf("the admin endpoint answers %d after the attempts, want 200", status)
	}
}

// problemDetail returns a problem+json body's detail.
func problemDetail(body []byte) string {
	_, rest, _ := strings.Cut(string(body), `"detail":"`)
	d, _, _ := strings.Cut(rest, `"`)
	return d
}

// A delivery queued to an address that the admin endpoint takes over after
// a restart (the subscription was accepted while nothing of the gateway
// listened there) is never sent to it: each attempt is refused on the
// address dialled and recorded, and the gateway keeps running (before the
// fix, the queued POST to /stop stopped it at every start).
func TestHostileQueuedDeliveryToTheAdminEndpointNeverSent(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 2s\n max_attempts 100\n retry_period 10m")
	tok := g.token(t, "acme-client", whAcmeSecret)
	newAdmin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	sub := g.subscribe(t, tok, "http://"+newAdmin+"/stop", "label-status")
	id := g.sendTest(t, sub)
	whEventually(t, whTimeout, "the first attempt (refused connection)", func() bool {
		ds := g.deliveries(t, "queued", "")
		return len(ds) == 1 && ds[0].Attempts >= 1
	})

	g.Stop()
	g.Admin = newAdmin
	g.Env = append(g.Env, "ADMIN="+newAdmin)
	g.Restart()
	whEventually(t, whTimeout, "two attempts refused as the gateway's own listener", func() bool {
		ds := g.deliveries(t, "queued", "")
		if len(ds) != 1 || ds[0].ID != id {
			return false
		}
		refused := 0
		for _, l := range ds[0].Log {
			if strings.Contains(l.Error, "the gateway's own listener") {
				refused++
			}
		}
		return refused >= 2
	})
	select {
	case <-g.done:
		t.Fatalf("the gateway stopped: a queued delivery reached its admin endpoint\n%s", g.Logs)
	case <-time.After(500 * time.Millisecond):
	}
	if status, _, _ := do(t, http.MethodGet, "http://"+newAdmin+"/config/", nil); status != http.StatusOK {
		t.Fatalf("the admin endpoint answers %d, want 200", status)
	}
}
