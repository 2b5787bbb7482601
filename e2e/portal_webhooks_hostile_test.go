package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Partner A's session sends B's subscription and delivery ids to every
// webhook page and action of the portal: each answers 404, exactly as an
// unknown id does, and nothing of B's changes or shows.
func TestPortalWebhooksRefuseAnotherPartnersIDs(t *testing.T) {
	g := startPortalWebhooksGateway(t)
	rcvA, rcvB := newHookReceiver(t), newHookReceiver(t)
	a, b := portalSignIn(t, g, "partner-acme"), portalSignIn(t, g, "partner-globex")
	subA := a.subscribe(t, "label-status", rcvA.URL+"/a")
	subB := b.subscribe(t, "label-status", rcvB.URL+"/b")
	rcvB.failing.Store(true)
	deadB := b.sendTest(t, subB, rcvB)
	b.waitState(t, url.Values{"subscription": {subB}}, deadB, "dead")
	hitsB := len(rcvB.Hits())
	rcvB.failing.Store(false)

	const unknownSub, unknownDelivery = "sub_aaaaaaaaaaaaaaaaaaaaaaaaaa", "whd_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	gets := []string{
		"/webhooks/deliveries?subscription=" + subB,
		"/webhooks/subscriptions/" + subB + "/delete",
		"/webhooks/subscriptions/" + subB + "/deliveries/" + deadB,
		"/webhooks/subscriptions/" + subA + "/deliveries/" + deadB,
	}
	posts := []struct {
		path string
		form url.Values
	}{
		{"/webhooks/subscriptions/" + subB + "/delete", nil},
		{"/webhooks/subscriptions/" + subB + "/test", nil},
		{"/webhooks/subscriptions/" + subB + "/deliveries/" + deadB + "/replay", nil},
		{"/webhooks/subscriptions/" + subA + "/deliveries/" + deadB + "/replay", nil},
		{"/webhooks/replay", url.Values{"subscription": {subB}, "since": {"2000-01-01T00:00"}}},
	}
	notFound := func(what string, status int, body string) {
		t.Helper()
		if status != http.StatusNotFound || !strings.Contains(body, "There is no such") {
			t.Errorf("%s with partner A's session: %d, want 404 \"There is no such …\"", what, status)
		}
		if strings.Contains(body, rcvB.URL) || strings.Contains(body, "partner-globex") {
			t.Errorf("%s with partner A's session shows partner B's data", what)
		}
	}
	for _, p := range gets {
		status, body := a.get(t, p)
		notFound("GET "+p, status, body)
		unknown := strings.NewReplacer(subB, unknownSub, deadB, unknownDelivery).Replace(p)
		ustatus, ubody := a.get(t, unknown)
		if ustatus != status || stripIDs(ubody, unknownSub, unknownDelivery) != stripIDs(body, subB, deadB) {
			t.Errorf("GET %s answers B's ids (%d) unlike unknown ids (%d): it must not tell that they exist", p, status, ustatus)
		}
	}
	for _, p := range posts {
		form := url.Values{"csrf_token": {a.csrf(t)}}
		for k, v := range p.form {
			form[k] = v
		}
		status, _, body := a.post(t, p.path, form)
		notFound("POST "+p.path, status, body)
	}

	// Replaying all of A's dead deliveries leaves B's alone; A's whole log
	// shows nothing of B's.
	status, h, _ := a.post(t, "/webhooks/replay", url.Values{"csrf_token": {a.csrf(t)}, "since": {"2000-01-01T00:00"}})
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "done=replayed_none") {
		t.Errorf("A replaying all its dead deliveries: %d, Location %q; want 303 saying none were replayed", status, h.Get("Location"))
	}
	if _, body := a.get(t, "/webhooks/deliveries"); strings.Contains(body, deadB) || strings.Contains(body, subB) {
		t.Error("A's delivery log shows B's delivery or subscription")
	}

	// B's subscription and dead delivery are as they were, and B's
	// receiver got nothing more.
	if _, body := b.get(t, "/webhooks"); !strings.Contains(body, `data-subscription="`+subB+`"`) {
		t.Error("B's subscription is gone after A's attempts to delete it")
	}
	if states := logStates(b.waitState(t, url.Values{"subscription": {subB}}, deadB, "dead")); states[deadB] != "dead" {
		t.Errorf("B's delivery is %q after A's attempts, want still dead", states[deadB])
	}
	if n := len(rcvB.Hits()); n != hitsB {
		t.Errorf("B's receiver got %d more requests after A's attempts, want none", n-hitsB)
	}

	// A's own key is the one revealed to A.
	status, _, body := a.post(t, "/webhooks/key/reveal", url.Values{"csrf_token": {a.csrf(t)}})
	if status != http.StatusOK || !strings.Contains(body, "DEMO-ONLY-acme-webhook-key") || strings.Contains(body, "globex") {
		t.Errorf("A revealing its key: %d, want A's key and nothing of B's", status)
	}
}

// Every webhook action of the portal refuses a form without the session's
// CSRF token, or with another session's, and changes nothing.
func TestPortalWebhookActionsNeedTheSessionsCSRFToken(t *testing.T) {
	g := startPortalWebhooksGateway(t)
	rcv := newHookReceiver(t)
	a, b := portalSignIn(t, g, "partner-acme"), portalSignIn(t, g, "partner-globex")
	sub := a.subscribe(t, "label-status", rcv.URL+"/a")
	actions := map[string]url.Values{
		"/webhooks/subscriptions":                    {"event": {"label-status"}, "notification_url": {rcv.URL + "/new"}},
		"/webhooks/subscriptions/" + sub + "/test":   nil,
		"/webhooks/subscriptions/" + sub + "/delete": nil,
		"/webhooks/key/reveal":                       nil,
		"/webhooks/key/rotate":                       nil,
		"/webhooks/replay":                           {"since": {"2000-01-01T00:00"}},
	}
	for path, form := range actions {
		for name, token := range map[string]string{"no token": "", "partner B's token": b.csrf(t)} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			if token != "" {
				f.Set("csrf_token", token)
			}
			status, _, body := a.post(t, path, f)
			if status != http.StatusForbidden || strings.Contains(body, "DEMO-ONLY") {
				t.Errorf("POST %s with %s: %d, want 403 and no key shown", path, name, status)
			}
		}
	}
	if _, body := a.get(t, "/webhooks"); !strings.Contains(body, `data-subscription="`+sub+`"`) || strings.Contains(body, rcv.URL+"/new") {
		t.Error("a refused form changed the subscriptions")
	}
	if n := len(rcv.Hits()); n != 0 {
		t.Errorf("the receiver got %d requests from refused forms, want none", n)
	}
}

// A webhook key set in the configuration is the operator's: the portal
// refuses to rotate it and says who can, and the key stays as it was.
func TestPortalDoesNotRotateAWebhookKeySetInTheConfiguration(t *testing.T) {
	g := startPortalWebhooksGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	status, _, body := a.post(t, "/webhooks/key/rotate", url.Values{"csrf_token": {a.csrf(t)}})
	if status != http.StatusConflict || !strings.Contains(body, "set by your warehouse") {
		t.Fatalf("rotating a configured webhook key: %d, want 409 saying the warehouse sets it\n%s", status, body)
	}
	_, _, body = a.post(t, "/webhooks/key/reveal", url.Values{"csrf_token": {a.csrf(t)}})
	if !strings.Contains(body, "DEMO-ONLY-acme-webhook-key-0123456789abcdef") {
		t.Fatal("the configured webhook key changed after a refused rotation")
	}
}

// stripIDs removes ids from a page, to compare pages that differ only by
// the ids asked for.
func stripIDs(body string, ids ...string) string {
	for _, id := range ids {
		body = strings.ReplaceAll(body, id, "")
	}
	return csrfPattern.ReplaceAllString(body, "")
}
