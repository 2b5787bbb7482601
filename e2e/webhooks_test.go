package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Partners of the webhook tests' gateways (static, from the Caddyfile).
const (
	whAcmeKey     = "acme-webhook-key-0123456789abcdef0123456789"
	whAcmeSecret  = "acme-client-secret-US40fyz4PxZm-txtT3oKqxsI6_1OEb7qGeMRO91uZT4"
	whOtherKey    = "other-webhook-key-0123456789abcdef012345678"
	whOtherSecret = "other-client-secret-mrQkQfs-XI0rkjltlhQ14YeRAfTWJ-P0TmmYmADCmh8"
	whTimeout     = 30 * time.Second
)

// webhooksCaddyfile is a gateway with two static partners, the token
// endpoint, the Bearer guard and the subscriptions API; webhooksBlock is the
// inside of the webhooks block.
func webhooksCaddyfile(webhooksBlock string) string {
	return `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
		tokens {
			partner acme {
				webhook_key ` + whAcmeKey + `
				client acme-client ` + whAcmeSecret + `
			}
			partner other {
				consolidation
				webhook_key ` + whOtherKey + `
				client other-client ` + whOtherSecret + `
			}
		}
		webhooks {
			` + webhooksBlock + `
		}
	}
}

http://127.0.0.1:{$PORT} {
	route /api/auth/token {
		fulfilment_token
	}
	route /api/fulfilment/* {
		fulfilment_auth
		fulfilment_subscriptions
		respond "not a subscriptions path" 404
	}
}
`
}

// hooksGateway is a running gateway of webhooksCaddyfile.
type hooksGateway struct {
	*gateway
	Base string // http://127.0.0.1:<port>
}

func startHooksGateway(t *testing.T, webhooksBlock string) *hooksGateway {
	t.Helper()
	port := freePort(t)
	g := startGateway(t, webhooksCaddyfile(webhooksBlock), "PORT="+strconv.Itoa(port))
	hg := &hooksGateway{gateway: g, Base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitHTTP(t, hg.Base+"/api/auth/token")
	return hg
}

// token gets a Bearer token for a client with Basic authentication.
func (g *hooksGateway) token(t *testing.T, client, secret string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", g.Base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth(client, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token for %s: %d %v\n%s", client, resp.StatusCode, err, g.Logs)
	}
	return tok.AccessToken
}

// subscribe registers url for event as the token's partner and returns the
// subscription id; it fails unless the answer is 201 or 200.
func (g *hooksGateway) subscribe(t *testing.T, token, url, event string) string {
	t.Helper()
	status, _, body := do(t, "POST", g.Base+"/api/fulfilment/v4/subscriptions",
		strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":%q}`, url, event)),
		"Authorization", "Bearer "+token, "Content-Type", "application/json")
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("subscribe %s: %d %s", url, status, body)
	}
	var sub struct{ ID string }
	if err := json.Unmarshal(body, &sub); err != nil || sub.ID == "" {
		t.Fatalf("subscribe answer %s", body)
	}
	return sub.ID
}

// admin calls the gateway's admin API and decodes a 2xx JSON answer into v
// (if not nil).
func (g *hooksGateway) admin(t *testing.T, method, path, body string, v any) {
	t.Helper()
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	} else {
		rd = strings.NewReader("")
	}
	status, _, b := do(t, method, "http://"+g.Admin+path, rd, "Content-Type", "application/json")
	if status/100 != 2 {
		t.Fatalf("admin %s %s: %d %s", method, path, status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("admin %s %s: %v: %s", method, path, err, b)
		}
	}
}

// sendTest queues a test event for a subscription through the admin API and
// returns its delivery id (the x-hook-id).
func (g *hooksGateway) sendTest(t *testing.T, subID string) string {
	t.Helper()
	var out struct{ Delivery string }
	g.admin(t, "POST", "/fulfilment/webhooks/test", fmt.Sprintf(`{"subscription":%q}`, subID), &out)
	return out.Delivery
}

type whDelivery struct {
	ID             string `json:"id"`
	SubscriptionID string `json:"subscriptionId"`
	PartnerID      string `json:"partnerId"`
	Attempts       int    `json:"attempts"`
	Log            []struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	} `json:"log"`
}

func (g *hooksGateway) deliveries(t *testing.T, kind, query string) []whDelivery {
	t.Helper()
	var out struct{ Deliveries []whDelivery }
	g.admin(t, "GET", "/fulfilment/webhooks/"+kind+query, "", &out)
	return out.Deliveries
}

func (g *hooksGateway) depth(t *testing.T) (queued, dead int64) {
	t.Helper()
	var out struct{ Queued, Dead int64 }
	g.admin(t, "GET", "/fulfilment/webhooks/depth", "", &out)
	return out.Queued, out.Dead
}

// whEventually polls cond every 100 ms until it holds or d passes.
func whEventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// whGoReceiver is an in-test receiver on 127.0.0.1 whose answer the test
// controls; it counts requests by x-hook-id.
type whGoReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	byID   map[string][]string // x-hook-id → x-hook-attempt values
	handle atomic.Pointer[func(w http.ResponseWriter, r *http.Request)]
}

func newWhGoReceiver(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *whGoReceiver {
	gr := &whGoReceiver{byID: map[string][]string{}}
	gr.set(h)
	gr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gr.mu.Lock()
		id := r.Header.Get("x-hook-id")
		gr.byID[id] = append(gr.byID[id], r.Header.Get("x-hook-attempt"))
		gr.mu.Unlock()
		(*gr.handle.Load())(w, r)
	}))
	t.Cleanup(gr.Close)
	return gr
}

func (gr *whGoReceiver) set(h func(w http.ResponseWriter, r *http.Request)) { gr.handle.Store(&h) }

func (gr *whGoReceiver) attempts(id string) []string {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	return slices.Clone(gr.byID[id])
}

func whOK200(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// A receiver that fails three times and then answers 200 gets the event
// four times with one x-hook-id and attempts 1..4, each correctly signed
// (verified by the Node and Python receivers), and the queue empties.
func TestWebhooksRetryUntilSuccess(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 2s\n max_attempts 10\n retry_period 1m")
	tok := g.token(t, "acme-client", whAcmeSecret)
	for _, lang := range []string{"node", "python"} {
		t.Run(lang, func(t *testing.T) {
			r := startWhReceiver(t, lang, whAcmeKey, "--fail-first", "3")
			sub := g.subscribe(t, tok, r.URL+"/hooks/"+lang, "shipment-shipped")
			id := g.sendTest(t, sub)
			hs := r.waitReceived(t, whTimeout, "four attempts", func(hs []whHook) bool { return len(hs) >= 4 })
			if len(hs) != 4 {
				t.Fatalf("got %d requests, want 4: %+v", len(hs), hs)
			}
			for i, h := range hs {
				if h.ID != id || h.Attempt != strconv.Itoa(i+1) || !h.Verified {
					t.Errorf("request %d: id %q attempt %q verified %v; want id %q attempt %d verified", i, h.ID, h.Attempt, h.Verified, id, i+1)
				}
				if h.Body != `{"type":"shipment.shipped","resource":"shipment","identifier":"test"}` || h.ContentType != "application/json" {
					t.Errorf("request %d: body %s content type %q", i, h.Body, h.ContentType)
				}
				if !strings.HasPrefix(h.UserAgent, "Fulfilgate-Webhooks/") {
					t.Errorf("request %d: User-Agent %q", i, h.UserAgent)
				}
				if ts, err := strconv.ParseInt(h.Timestamp, 10, 64); err != nil || time.Since(time.Unix(ts, 0)) > time.Minute {
					t.Errorf("request %d: x-hook-timestamp %q", i, h.Timestamp)
				}
			}
			if want := []int{500, 500, 500, 200}; fmt.Sprint([]int{hs[0].Status, hs[1].Status, hs[2].Status, hs[3].Status}) != fmt.Sprint(want) {
				t.Errorf("receiver statuses %+v, want %v", hs, want)
			}
			whEventually(t, 10*time.Second, "queue empty", func() bool { q, d := g.depth(t); return q == 0 && d == 0 })
			time.Sleep(1500 * time.Millisecond) // a fifth request would show up here
			if n := len(r.received(t)); n != 4 {
				t.Fatalf("after success the receiver got %d requests, want 4", n)
			}
		})
	}
}

// A receiver that never answers is abandoned after max_attempts (each
// attempt timing out), shows up as dead with its attempt log, and a replay
// through the CLI delivers it with the same x-hook-id once it answers.
//
// Only max_attempts ends the delivery here: the retry period (1 h) is out of
// reach of three attempts of at most 1 s each with back-offs of at most 1 s
// and 2 s, however slow the machine. (With a period of a few seconds the
// third attempt could fall after it and the delivery die after two.) Which
// of the two limits ends a delivery is tested in package webhooks with an
// injected clock (TestDeliveryAttemptLimit, TestDeliveryOutageGoesDeadThenReplays).
func TestWebhooksAbandonedThenReplayed(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 1s\n max_attempts 3\n retry_period 1h")
	tok := g.token(t, "acme-client", whAcmeSecret)
	release := make(chan struct{})
	gr := newWhGoReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers in time
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	sub := g.subscribe(t, tok, gr.URL+"/slow", "label-status")
	id := g.sendTest(t, sub)

	var dead []whDelivery
	whEventually(t, whTimeout, "delivery dead", func() bool {
		dead = g.deliveries(t, "dead", "?subscription="+sub)
		return len(dead) == 1
	})
	d := dead[0]
	if d.ID != id || d.Attempts != 3 || len(d.Log) != 3 || d.PartnerID != "acme" {
		t.Fatalf("dead delivery %+v", d)
	}
	for _, a := range d.Log {
		if !strings.Contains(a.Error, "timeout") {
			t.Fatalf("attempt log %+v, want time-outs", d.Log)
		}
	}
	if got := gr.attempts(id); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("receiver saw attempts %v, want [1 2 3]", got)
	}
	if q := g.deliveries(t, "queued", ""); len(q) != 0 {
		t.Fatalf("dead delivery still queued: %+v", q)
	}
	// The CLI lists it too.
	out, err := g.CLI("fulfilment", "webhooks", "dead", "--address", g.Admin, "--partner", "acme")
	if err != nil || !strings.Contains(out, id) {
		t.Fatalf("caddy fulfilment webhooks dead: %v\n%s", err, out)
	}
	out, err = g.CLI("fulfilment", "webhooks", "depth", "--address", g.Admin)
	if err != nil || !strings.Contains(out, `"dead": 1`) {
		t.Fatalf("caddy fulfilment webhooks depth: %v\n%s", err, out)
	}

	gr.set(whOK200)
	if out, err := g.CLI("fulfilment", "webhooks", "replay", id, "--address", g.Admin); err != nil || !strings.Contains(out, `"replayed": 1`) {
		t.Fatalf("caddy fulfilment webhooks replay: %v\n%s", err, out)
	}
	whEventually(t, whTimeout, "replayed delivery arrives", func() bool { return len(gr.attempts(id)) == 4 })
	whEventually(t, 10*time.Second, "queue empty", func() bool { q, d := g.depth(t); return q == 0 && d == 0 })

	// A second dead letter, replayed by subscription and time.
	gr.set(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	id2 := g.sendTest(t, sub)
	whEventually(t, whTimeout, "second delivery dead", func() bool { return len(g.deliveries(t, "dead", "")) == 1 })
	gr.set(whOK200)
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	out, err = g.CLI("fulfilment", "webhooks", "replay", "--subscription", sub, "--since", since, "--address", g.Admin)
	if err != nil || !strings.Contains(out, `"replayed": 1`) {
		t.Fatalf("replay --subscription: %v\n%s", err, out)
	}
	whEventually(t, whTimeout, "second delivery arrives", func() bool {
		a := gr.attempts(id2)
		return len(a) > 0 && a[len(a)-1] == "1" && len(a) == 4
	})
	if out, err := g.CLI("fulfilment", "webhooks", "replay", "whd_nope", "--address", g.Admin); err == nil {
		t.Fatalf("replaying an unknown delivery succeeded:\n%s", out)
	}
}

// A redirect is not followed and counts as a failure.
func TestWebhooksRedirectIsFailure(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 2s\n max_attempts 2\n retry_period 30s")
	tok := g.token(t, "acme-client", whAcmeSecret)
	target := newWhGoReceiver(t, whOK200)
	redirect := newWhGoReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	})
	sub := g.subscribe(t, tok, redirect.URL+"/moved", "outbound-status")
	id := g.sendTest(t, sub)
	var dead []whDelivery
	whEventually(t, whTimeout, "redirected delivery dead", func() bool {
		dead = g.deliveries(t, "dead", "")
		return len(dead) == 1
	})
	if dead[0].ID != id || dead[0].Attempts != 2 || dead[0].Log[0].Status != http.StatusTemporaryRedirect {
		t.Fatalf("dead delivery %+v", dead[0])
	}
	if n := len(redirect.attempts(id)); n != 2 {
		t.Fatalf("redirecting receiver got %d requests, want 2", n)
	}
	if n := len(target.attempts(id)); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

// writeCaddyfile replaces the gateway's Caddyfile (for the next Restart).
func writeCaddyfile(g *gateway, caddyfile string) error {
	return os.WriteFile(filepath.Join(g.Dir, "Caddyfile"), []byte(caddyfile), 0o600)
}
