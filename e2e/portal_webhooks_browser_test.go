package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fulfilgate/fulfilgate/internal/browsertest"
)

// The partner's webhook story in a real Chromium: subscribe a real
// receiver on 127.0.0.1, send a test event and see it verified at the
// receiver (with the key the page reveals) and listed in the log; make the
// receiver fail until the delivery is dead, replay it from its page and see
// it arrive; replay everything dead since a time; read the event catalogue
// as a non-consolidation partner;
// rotate the key and see the next delivery verify with the new one; delete
// the subscription. Each page is saved as a screenshot.
func TestPortalWebhooksInABrowser(t *testing.T) {
	ctx := browsertest.Start(t)
	g := startPortalWebhooksGateway(t)
	rcv := newHookReceiver(t)
	// A partner created at run time (non-consolidation): its webhook key
	// is the gateway's to rotate.
	var created struct {
		ClientID string `json:"client_id"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-initech")
	link, _ := portalLink(t, g, "partner-initech")
	bp := browserPage{t, ctx, g}
	shot, run, follow, text, html := bp.shot, bp.run, bp.follow, bp.text, bp.html
	logURL := func(q url.Values) string { return g.Base + "/portal/webhooks/deliveries?" + q.Encode() }
	// waitState reloads the log until delivery id shows state.
	waitState := func(q url.Values, id, state string) {
		t.Helper()
		for range 300 {
			run("the delivery log", chromedp.Navigate(logURL(q)), chromedp.WaitVisible(chromedp.CSS("#log-title")))
			if logStates(html())[id] == state {
				return
			}
			run("waiting", chromedp.Sleep(100_000_000))
		}
		t.Fatalf("delivery %s never showed %s in the log; rows: %v", id, state, logStates(html()))
	}

	run("signing in", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#continue")))
	follow("signing in", "#continue", chromedp.WaitVisible(chromedp.CSS("main h1")))

	// Webhooks: reveal the key; the receiver checks signatures with it.
	follow("opening Webhooks", `nav a[href="/portal/webhooks"]`, chromedp.WaitVisible(chromedp.CSS("#subs-title")))
	shot("01-webhooks-empty")
	follow("revealing the key", "#reveal-key", chromedp.WaitVisible(chromedp.CSS("#webhook-key")))
	key := text("#webhook-key")
	if len(key) < 32 {
		t.Fatalf("the revealed key %q is not a webhook key", key)
	}
	rcv.setKey(key)
	shot("02-key-revealed")

	// Subscribe the receiver.
	run("subscribing", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS("#subscribe")),
		chromedp.SetValue(chromedp.CSS("#event"), "label-status"),
		chromedp.SendKeys(chromedp.CSS("#notification_url"), rcv.URL+"/hooks"))
	follow("subscribing", "#subscribe", chromedp.WaitVisible(chromedp.CSS("#subscriptions")))
	if n := text(".notice.success"); !strings.Contains(n, "subscription was created") {
		t.Fatalf("after subscribing the page says %q, want that the subscription was created", n)
	}
	m := subscriptionRowPattern.FindStringSubmatch(html())
	if m == nil {
		t.Fatal("the Webhooks page lists no subscription after subscribing")
	}
	sub := m[1]
	shot("03-subscribed")

	// A refused URL is explained on the form, and nothing is created.
	run("subscribing a private address", chromedp.SetValue(chromedp.CSS("#notification_url"), "https://10.0.0.1/hooks"))
	follow("subscribing a private address", "#subscribe", chromedp.WaitVisible(chromedp.CSS("#subscription-error")))
	if e := text("#subscription-error"); !strings.Contains(e, "host not allowed") {
		t.Fatalf("a private notification URL shows %q, want the host refusal", e)
	}
	shot("04-subscribe-refused")

	// Send a test event: verified at the receiver, listed as delivered.
	before := len(rcv.Hits())
	run("sending a test event", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS(".send-test")))
	follow("sending a test event", ".send-test", chromedp.WaitVisible(chromedp.CSS("#log-title")))
	hit := rcv.waitHit(t, "the test event", before, func(h hookHit) bool { return h.Test == "true" })
	if !hit.Verified || !strings.Contains(string(hit.Body), `"identifier":"test"`) {
		t.Fatalf("the test event %+v did not verify with the revealed key, or is not marked as a test", hit)
	}
	q := url.Values{"subscription": {sub}}
	waitState(q, hit.ID, "delivered")
	shot("05-log-test-delivered")
	follow("the test delivery's attempts", `a[href="/portal/webhooks/subscriptions/`+sub+`/deliveries/`+hit.ID+`"]`,
		chromedp.WaitVisible(chromedp.CSS("#attempts")))
	if id, attempts := text("#hook-id"), text("#attempts tbody"); id != hit.ID || !strings.Contains(attempts, "200") {
		t.Fatalf("the delivery page shows x-hook-id %q and attempts %q, want %s answered 200", id, attempts, hit.ID)
	}
	shot("06-delivery-delivered")

	// The receiver fails: the next test event dies after two attempts.
	rcv.failing.Store(true)
	before = len(rcv.Hits())
	run("sending a test event to a failing receiver", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS(".send-test")))
	follow("sending a test event to a failing receiver", ".send-test", chromedp.WaitVisible(chromedp.CSS("#log-title")))
	dead := rcv.waitHit(t, "the second test event", before, func(h hookHit) bool { return h.Test == "true" }).ID
	waitState(q, dead, "dead")
	shot("07-log-dead")
	run("filtering dead deliveries", chromedp.SetValue(chromedp.CSS("#f-state"), "dead"))
	// The form's GET replaces a page that has the same table: follow waits
	// for the filtered page to load before it is read.
	follow("filtering dead deliveries", "#filter", chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	if u, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.Contains(u, "state=dead") {
		t.Fatalf("the filter form loaded %q (%v), want the log filtered to state=dead", u, err)
	}
	if rows := logStates(html()); len(rows) != 1 || rows[dead] != "dead" {
		t.Fatalf("the log filtered to dead deliveries shows %v, want only %s", rows, dead)
	}
	shot("08-log-filtered-dead")
	run("the dead delivery's attempts", chromedp.Navigate(g.Base+"/portal/webhooks/subscriptions/"+sub+"/deliveries/"+dead),
		chromedp.WaitVisible(chromedp.CSS("#attempts")))
	if attempts := text("#attempts tbody"); strings.Count(attempts, "503") != 2 {
		t.Fatalf("the dead delivery's attempts read %q, want two 503 answers", attempts)
	}
	shot("09-delivery-dead")

	// Replay it from its page: it arrives, with the same x-hook-id.
	rcv.failing.Store(false)
	before = len(rcv.Hits())
	follow("replaying", "#replay", chromedp.WaitVisible(chromedp.CSS(".notice.success")))
	shot("10-replayed")
	again := rcv.waitHit(t, "the replayed delivery", before, func(h hookHit) bool { return h.ID == dead })
	if !again.Verified || again.Attempt != "1" {
		t.Fatalf("the replayed delivery %+v did not verify, or did not start again at attempt 1", again)
	}
	waitState(q, dead, "delivered")

	// Replay all dead since a time: another dead delivery comes back.
	rcv.failing.Store(true)
	before = len(rcv.Hits())
	run("one more test event to a failing receiver", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS(".send-test")))
	follow("one more test event to a failing receiver", ".send-test", chromedp.WaitVisible(chromedp.CSS("#log-title")))
	dead2 := rcv.waitHit(t, "the third test event", before, func(h hookHit) bool { return h.Test == "true" }).ID
	waitState(url.Values{}, dead2, "dead")
	rcv.failing.Store(false)
	before = len(rcv.Hits())
	follow("replaying all dead since a day ago", "#replay-since", chromedp.WaitVisible(chromedp.CSS(".notice.success")))
	if n := text(".notice.success"); !strings.Contains(n, "queued again") {
		t.Fatalf("after replaying since a time the page says %q, want that they were queued again", n)
	}
	rcv.waitHit(t, "the delivery replayed since a time", before, func(h hookHit) bool { return h.ID == dead2 && h.Verified })
	waitState(url.Values{}, dead2, "delivered")
	shot("11-log-after-replay-since")

	// The event catalogue, for a non-consolidation partner.
	follow("the event catalogue", `nav a[href="/portal/events"]`, chromedp.WaitVisible(chromedp.CSS("#verify")))
	if sc := text("#event-shipment-created"); !strings.Contains(sc, "not for your account") {
		t.Fatalf("shipment-created reads %q for a non-consolidation partner, want it marked as never firing", sc)
	}
	if ss := text("#event-shipment-shipped"); !strings.Contains(ss, "label") {
		t.Fatalf("shipment-shipped reads %q for a non-consolidation partner, want it to fire when the label is printed", ss)
	}
	for _, f := range []string{"verify.go", "verify.js", "verify.py", "verify.sh"} {
		if src := text("#snippet-src-" + strings.ReplaceAll(f, ".", "\\.")); !strings.Contains(src, "x-hook-signature") {
			t.Errorf("the %s snippet is missing from the catalogue", f)
		}
	}
	if call := text("#call-api"); !strings.Contains(call, g.Base+"/api/auth/token") || !strings.Contains(call, g.Base+"/api/fulfilment/v4/shipments") {
		t.Errorf("the catalogue's API call %q does not use this gateway's token URL and v4 base", call)
	}
	shot("12-events")

	// Rotate the key: the next delivery verifies with the new key only.
	run("rotating the key", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS("#rotate-key")))
	follow("rotating the key", "#rotate-key", chromedp.WaitVisible(chromedp.CSS("#confirm")))
	shot("13-rotate-key-confirm")
	follow("confirming the rotation", "#confirm", chromedp.WaitVisible(chromedp.CSS("#webhook-key")))
	newKey := text("#webhook-key")
	if newKey == key || len(newKey) < 32 {
		t.Fatalf("the rotated key %q is not a new key", newKey)
	}
	shot("14-key-rotated")
	rcv.setKey(newKey)
	before = len(rcv.Hits())
	run("a test event after the rotation", chromedp.Navigate(g.Base+"/portal/webhooks"), chromedp.WaitVisible(chromedp.CSS(".send-test")))
	follow("a test event after the rotation", ".send-test", chromedp.WaitVisible(chromedp.CSS("#log-title")))
	if h := rcv.waitHit(t, "a test event after the rotation", before, func(h hookHit) bool { return h.Test == "true" }); !h.Verified {
		t.Fatal("the delivery after the rotation does not verify with the new key")
	}

	// The log on a phone.
	run("phone viewport", chromedp.EmulateViewport(browsertest.Phone.W, browsertest.Phone.H),
		chromedp.Navigate(logURL(url.Values{})), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	shot("15-log-phone")
	run("laptop viewport", chromedp.EmulateViewport(browsertest.Laptop.W, browsertest.Laptop.H))

	// Delete the subscription.
	run("deleting", chromedp.Navigate(g.Base+"/portal/webhooks/subscriptions/"+sub+"/delete"), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	shot("16-delete-confirm")
	follow("confirming the deletion", "#confirm", chromedp.WaitVisible(chromedp.CSS(".notice.success")))
	if strings.Contains(html(), `data-subscription="`+sub+`"`) {
		t.Fatal("the subscription is still listed after deleting it")
	}
	shot("17-deleted")

	if logs := g.Logs.String(); strings.Contains(logs, key) || strings.Contains(logs, newKey) {
		t.Error("the gateway's logs contain a webhook key")
	}
}
