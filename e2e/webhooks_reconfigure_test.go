package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// A `caddy reload` that lowers max_attempts and retry_period applies to the
// running dispatcher at once: a delivery that would retry 50 times over
// hours goes dead within seconds, without a restart.
func TestWebhooksReloadAppliesSettings(t *testing.T) {
	t.Parallel()
	const common = "allow_http\n allow_networks 127.0.0.0/8\n timeout 2s\n "
	g := startHooksGateway(t, common+"max_attempts 50")
	tok := g.token(t, "acme-client", whAcmeSecret)
	gr := newWhGoReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	sub := g.subscribe(t, tok, gr.URL+"/fails", "label-status")
	id := g.sendTest(t, sub)

	// Retrying under the first settings (the first delays are 1–2 s).
	whEventually(t, whTimeout, "two failed attempts", func() bool { return len(gr.attempts(id)) >= 2 })
	if dead := g.deliveries(t, "dead", ""); len(dead) != 0 {
		t.Fatalf("dead before the reload: %+v", dead)
	}

	g.Reload(webhooksCaddyfile(common + "max_attempts 2\n retry_period 5s"))
	var dead []whDelivery
	whEventually(t, whTimeout, "delivery dead after the reload", func() bool {
		dead = g.deliveries(t, "dead", "?subscription="+sub)
		return len(dead) == 1
	})
	d := dead[0]
	// The attempt in flight at the reload may have finished under the old
	// settings; the next failure ended it.
	if d.ID != id || d.Attempts < 2 || d.Attempts >= 50 || len(gr.attempts(id)) != d.Attempts {
		t.Fatalf("dead delivery %+v; receiver saw attempts %v", d, gr.attempts(id))
	}
	if q := g.deliveries(t, "queued", ""); len(q) != 0 {
		t.Fatalf("still queued: %+v", q)
	}
	logs := g.Logs.String()
	if !contains(logs, "webhook settings applied", `"max_attempts":2`, `"max_attempts_was":50`, `"retry_period":"5s"`) {
		t.Fatalf("no settings-applied log with the changed values:\n%s", logs)
	}
	if strings.Contains(logs, "until the server restarts") {
		t.Fatal("the reload still warns that settings wait for a restart")
	}
	if n := strings.Count(logs, "webhook dispatcher started"); n != 1 {
		t.Fatalf("dispatcher started %d times: the reload restarted it", n)
	}
}

// A reload that removes allow_http stops deliveries to existing http://
// subscriptions at their next attempt: the receiver gets nothing more,
// the attempt is recorded as refused, and the delivery stays queued (it is
// not dropped); a reload that allows http again lets the retry through.
func TestWebhooksReloadWithoutAllowHTTPRefusesHTTPDeliveries(t *testing.T) {
	t.Parallel()
	const rest = "allow_networks 127.0.0.0/8\n timeout 2s\n max_attempts 50\n retry_period 10m"
	g := startHooksGateway(t, "allow_http\n "+rest)
	tok := g.token(t, "acme-client", whAcmeSecret)
	gr := newWhGoReceiver(t, whOK200)
	sub := g.subscribe(t, tok, gr.URL+"/plain", "label-status")
	g.Reload(webhooksCaddyfile(rest))
	id := g.sendTest(t, sub)
	whEventually(t, whTimeout, "a refused attempt", func() bool {
		q := g.deliveries(t, "queued", "")
		return len(q) == 1 && q[0].Attempts >= 1
	})
	q := g.deliveries(t, "queued", "")
	if q[0].ID != id || !strings.Contains(q[0].Log[0].Error, "plain http") {
		t.Fatalf("queued %+v, want the delivery with a refusal naming plain http", q)
	}
	if n := len(gr.attempts(id)); n != 0 {
		t.Fatalf("the receiver got %d requests over plain http after allow_http was removed", n)
	}
	g.Reload(webhooksCaddyfile("allow_http\n " + rest))
	whEventually(t, whTimeout, "delivered after allow_http came back", func() bool { return len(gr.attempts(id)) == 1 })
}
