package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startPortalWebhooksGateway runs the demo Caddyfile with a small retry
// configuration: two attempts a second or so apart, so a failing receiver
// makes a delivery dead within seconds.
func startPortalWebhooksGateway(t *testing.T) *repoGateway {
	t.Helper()
	cf := repoCaddyfile(t)
	const block = "\t\twebhooks {\n\t\t\tallow_http\n"
	if !strings.Contains(cf, block) {
		t.Fatal("the demo Caddyfile has no webhooks block with allow_http to configure")
	}
	cf = strings.Replace(cf, block, block+"\t\t\tmax_attempts 2\n\t\t\ttimeout 2s\n", 1)
	return startRepoGateway(t, cf)
}

// hookHit is one webhook request a receiver got.
type hookHit struct {
	ID, Attempt, Test string
	Body              []byte
	Verified          bool // the signature matched the receiver's key
}

// hookReceiver is a real webhook receiver on 127.0.0.1: it checks each
// request's x-hook-signature with the key it is given, and answers 200, or
// 503 while failing is set.
type hookReceiver struct {
	*httptest.Server
	failing atomic.Bool
	mu      sync.Mutex
	key     string
	hits    []hookHit
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		mac := hmac.New(sha256.New, []byte(r.key))
		mac.Write(body)
		got, err := base64.StdEncoding.DecodeString(req.Header.Get("x-hook-signature"))
		r.hits = append(r.hits, hookHit{ID: req.Header.Get("x-hook-id"), Attempt: req.Header.Get("x-hook-attempt"),
			Test: req.Header.Get("x-hook-test"), Body: body, Verified: err == nil && r.key != "" && hmac.Equal(got, mac.Sum(nil))})
		r.mu.Unlock()
		if r.failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

// setKey sets the webhook key the receiver checks signatures with.
func (r *hookReceiver) setKey(k string) {
	r.mu.Lock()
	r.key = k
	r.mu.Unlock()
}

// Hits returns the requests so far.
func (r *hookReceiver) Hits() []hookHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookHit(nil), r.hits...)
}

// waitHit waits for a request after the first from that ok accepts and
// returns it; the deadline only bounds a broken test.
func (r *hookReceiver) waitHit(t *testing.T, what string, from int, ok func(hookHit) bool) hookHit {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, h := range r.Hits()[from:] {
			if ok(h) {
				return h
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the receiver never got %s; it got %+v", what, r.Hits())
	return hookHit{}
}

var logRowPattern = regexp.MustCompile(`data-delivery="([^"]+)" data-state="([^"]+)"`)

// logStates reads a delivery log page's rows: delivery id → state.
func logStates(body string) map[string]string {
	out := map[string]string{}
	for _, m := range logRowPattern.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// waitState reloads the delivery log (query: its filters) until delivery
// id is in state, and returns the page.
func (s *portalSession) waitState(t *testing.T, query url.Values, id, state string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		var status int
		status, body = s.get(t, "/webhooks/deliveries?"+query.Encode())
		if status != http.StatusOK {
			t.Fatalf("the delivery log answered %d:\n%s", status, body)
		}
		if logStates(body)[id] == state {
			return body
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("delivery %s never reached state %s in the log; last page's rows: %v", id, state, logStates(body))
	return ""
}

var subscriptionRowPattern = regexp.MustCompile(`data-subscription="([^"]+)"`)

// subscribe creates a subscription through the portal's form and returns
// its id.
func (s *portalSession) subscribe(t *testing.T, event, notificationURL string) string {
	t.Helper()
	_, before := s.get(t, "/webhooks")
	status, h, body := s.post(t, "/webhooks/subscriptions", url.Values{"csrf_token": {s.csrf(t)},
		"event": {event}, "notification_url": {notificationURL}})
	if status != http.StatusSeeOther || h.Get("Location") != "/portal/webhooks?done=subscribed" {
		t.Fatalf("subscribing answered %d, Location %q, want 303 to /portal/webhooks?done=subscribed\n%s", status, h.Get("Location"), body)
	}
	_, after := s.get(t, "/webhooks")
	old := map[string]bool{}
	for _, m := range subscriptionRowPattern.FindAllStringSubmatch(before, -1) {
		old[m[1]] = true
	}
	for _, m := range subscriptionRowPattern.FindAllStringSubmatch(after, -1) {
		if !old[m[1]] {
			return m[1]
		}
	}
	t.Fatal("the Webhooks page lists no new subscription after subscribing")
	return ""
}

// sendTest sends a test event to subscription sub through the portal and
// returns the test delivery's id as the receiver sees it (x-hook-id).
func (s *portalSession) sendTest(t *testing.T, sub string, rcv *hookReceiver) string {
	t.Helper()
	before := len(rcv.Hits())
	status, h, body := s.post(t, "/webhooks/subscriptions/"+sub+"/test", url.Values{"csrf_token": {s.csrf(t)}})
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "done=test_sent") {
		t.Fatalf("sending a test answered %d, Location %q\n%s", status, h.Get("Location"), body)
	}
	return rcv.waitHit(t, "the test event", before, func(hit hookHit) bool { return hit.Test == "true" }).ID
}
