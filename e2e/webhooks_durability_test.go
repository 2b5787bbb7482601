package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Events accepted while the receiver is down survive kill -9: after a
// restart with the receiver up, every accepted event arrives (at least
// once), correctly signed.
func TestWebhooksSurviveKill9(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 1s\n max_attempts 100\n retry_period 5m")
	tok := g.token(t, "acme-client", whAcmeSecret)
	port := freePort(t) // nothing listens here yet
	sub := g.subscribe(t, tok, fmt.Sprintf("http://127.0.0.1:%d/hook", port), "receipt-received")
	const n = 20
	var ids []string
	for range n {
		ids = append(ids, g.sendTest(t, sub)) // 202: accepted, on disk
	}
	// Let some attempts fail against the closed port first.
	whEventually(t, whTimeout, "first failed attempts", func() bool {
		q := g.deliveries(t, "queued", "?limit=100")
		return len(q) == n && q[0].Attempts > 0
	})
	g.Kill9()

	r := startWhReceiver(t, "node", whAcmeKey, "--port", strconv.Itoa(port))
	g.Restart()
	hs := r.waitReceived(t, 60*time.Second, "every accepted event", func(hs []whHook) bool {
		seen := map[string]bool{}
		for _, h := range hs {
			seen[h.ID] = true
		}
		for _, id := range ids {
			if !seen[id] {
				return false
			}
		}
		return true
	})
	for _, h := range hs {
		if !h.Verified || h.Status != 200 {
			t.Fatalf("delivery after restart: %+v", h)
		}
	}
	whEventually(t, 10*time.Second, "queue empty", func() bool { q, d := g.depth(t); return q == 0 && d == 0 })
}

var metricLine = regexp.MustCompile(`(?m)^fulfilgate_webhooks_deliveries_total\{event="label-status",outcome="success"\} (\d+)`)

// deliveredMetric reads the success counter from the admin /metrics.
func deliveredMetric(t *testing.T, g *hooksGateway) int {
	t.Helper()
	s, _, b := do(t, "GET", "http://"+g.Admin+"/metrics", nil)
	if s != 200 {
		t.Fatalf("/metrics: %d", s)
	}
	m := metricLine.FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// `caddy reload` during a burst of deliveries loses nothing and keeps one
// dispatcher: every accepted event arrives, the dispatcher started once,
// and the delivery counter carries over into the new config's registry.
func TestWebhooksReloadDuringBurst(t *testing.T) {
	t.Parallel()
	block := "allow_http\n allow_networks 127.0.0.0/8\n timeout 5s\n max_attempts 50\n retry_period 5m\n per_target_concurrency 2"
	g := startHooksGateway(t, block)
	tok := g.token(t, "acme-client", whAcmeSecret)
	var mu sync.Mutex
	got := map[string]int{}
	bad := 0
	rcv := newWhGoReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(30 * time.Millisecond) // keep deliveries in flight
		mu.Lock()
		got[r.Header.Get("x-hook-id")]++
		if !webhooks.Verify([]byte(whAcmeKey), body, r.Header.Get("x-hook-signature")) {
			bad++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	sub := g.subscribe(t, tok, rcv.URL+"/hook", "label-status")

	// The burst: test events sent through the admin API; an event counts
	// as accepted only when the API answered 202 (the admin endpoint is
	// briefly replaced during a reload, so failed calls are retried).
	client := &http.Client{Timeout: 10 * time.Second}
	accepted := make(chan string, 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 80; i++ {
			for try := 0; try < 50; try++ {
				resp, err := client.Post("http://"+g.Admin+"/fulfilment/webhooks/test", "application/json",
					bytes.NewReader(fmt.Appendf(nil, `{"subscription":%q}`, sub)))
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusAccepted {
						id := regexp.MustCompile(`"delivery":"([^"]+)"`).FindSubmatch(b)
						accepted <- string(id[1])
						break
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	g.Reload(webhooksCaddyfile(block + "\n user_agent Reloaded/1"))
	time.Sleep(300 * time.Millisecond)
	g.Reload(webhooksCaddyfile(block))
	<-done
	close(accepted)
	var ids []string
	for id := range accepted {
		ids = append(ids, id)
	}
	if len(ids) < 80 {
		t.Fatalf("only %d of 80 test events were accepted", len(ids))
	}
	whEventually(t, 60*time.Second, "every accepted event delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	if bad > 0 {
		t.Errorf("%d deliveries with a bad signature", bad)
	}
	mu.Unlock()
	whEventually(t, 10*time.Second, "queue empty", func() bool { q, d := g.depth(t); return q == 0 && d == 0 })

	logs := g.Logs.String()
	if n := strings.Count(logs, "webhook dispatcher started"); n != 1 {
		t.Fatalf("dispatcher started %d times, want once\n%s", n, logs)
	}
	if n := strings.Count(logs, "webhook dispatcher kept across reload"); n != 2 {
		t.Fatalf("dispatcher kept %d times, want 2 (one per reload)", n)
	}
	if !contains(logs, "webhook settings applied", `"user_agent":"Reloaded/1"`) {
		t.Fatal("a changed user_agent on reload was not applied and reported")
	}
	if m := deliveredMetric(t, g); m < len(ids) {
		t.Fatalf("fulfilgate_webhooks_deliveries_total{success} = %d after reloads, want ≥ %d", m, len(ids))
	}
}
