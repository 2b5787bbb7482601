package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// One partner's receivers that accept and never answer (100 subscriptions
// on 20 of them, each its own host and port) do not hold up another
// partner: its delivery arrives while every one of the first partner's
// attempts is still hanging.
func TestHostileDeadReceiversDoNotDelayOtherPartners(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 5m\n max_subscriptions_per_partner 100")
	acme := g.token(t, "acme-client", whAcmeSecret)
	other := g.token(t, "other-client", whOtherSecret)
	release := make(chan struct{})
	var subs []string
	for i := range 20 {
		tp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(tp.Close)
		for j := range 5 {
			subs = append(subs, g.subscribe(t, acme, fmt.Sprintf("%s/tarpit/%d", tp.URL, i*5+j), "label-status"))
		}
	}
	t.Cleanup(func() { close(release) }) // before the tarpits close
	for _, s := range subs {
		g.sendTest(t, s)
	}
	healthy := newWhGoReceiver(t, whOK200)
	id := g.sendTest(t, g.subscribe(t, other, healthy.URL+"/hooks", "label-status"))
	whEventually(t, whTimeout, "the other partner's delivery while the tarpits hold", func() bool {
		return len(healthy.attempts(id)) == 1
	})
	for _, d := range g.deliveries(t, "queued", "?limit=1000") {
		if d.PartnerID == "acme" && d.Attempts != 0 {
			t.Fatalf("an attempt to a tarpit finished (%+v): the test no longer shows the receivers hanging", d)
		}
	}
}
