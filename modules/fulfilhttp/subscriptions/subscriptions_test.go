package subscriptions

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

func TestSubscriptionsLifecycle(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	body := `{"notificationUrl":"http://127.0.0.1:9/hooks?x=1","event":"shipment-shipped"}`

	w := c.post("p1", body)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	sub := decodeInto[map[string]string](t, w)
	if sub["id"] == "" || sub["notificationUrl"] != "http://127.0.0.1:9/hooks?x=1" || sub["event"] != "shipment-shipped" || sub["createdAt"] == "" {
		t.Fatalf("created subscription: %v", sub)
	}
	if len(sub) != 4 {
		t.Fatalf("subscription has fields %v, want exactly id, notificationUrl, event, createdAt", sub)
	}
	if loc := w.Header().Get("Location"); loc != subscriptionsPath+"/"+sub["id"] {
		t.Fatalf("Location %q", loc)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}

	w = c.post("p1", body) // idempotent
	if w.Code != http.StatusOK || decodeInto[map[string]string](t, w)["id"] != sub["id"] {
		t.Fatalf("create again: %d %s, want 200 with id %s", w.Code, w.Body, sub["id"])
	}
	w = c.post("p2", body) // another partner, same url and event: its own
	other := decodeInto[map[string]string](t, w)
	if w.Code != http.StatusCreated || other["id"] == sub["id"] {
		t.Fatalf("other partner create: %d %s", w.Code, w.Body)
	}

	list := decodeInto[struct {
		Subscriptions []map[string]string `json:"subscriptions"`
	}](t, c.do("p1", "GET", subscriptionsPath, "", ""))
	if len(list.Subscriptions) != 1 || list.Subscriptions[0]["id"] != sub["id"] {
		t.Fatalf("p1 list: %+v", list)
	}
	one := c.do("p1", "GET", subscriptionsPath+"/"+sub["id"], "", "")
	if one.Code != http.StatusOK || decodeInto[map[string]string](t, one)["id"] != sub["id"] {
		t.Fatalf("get: %d %s", one.Code, one.Body)
	}

	// Partner isolation: p2 can neither see nor delete p1's subscription.
	for _, m := range []string{"GET", "DELETE"} {
		if w := c.do("p2", m, subscriptionsPath+"/"+sub["id"], "", ""); w.Code != http.StatusNotFound {
			t.Fatalf("p2 %s of p1's subscription: %d %s", m, w.Code, w.Body)
		}
	}
	if w := c.do("p1", "DELETE", subscriptionsPath+"/"+sub["id"], "", ""); w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Fatalf("delete: %d %q", w.Code, w.Body)
	}
	if w := c.do("p1", "GET", subscriptionsPath+"/"+sub["id"], "", ""); w.Code != http.StatusNotFound {
		t.Fatalf("get after delete: %d", w.Code)
	}
	if w := c.do("p1", "DELETE", subscriptionsPath+"/"+sub["id"], "", ""); w.Code != http.StatusNotFound {
		t.Fatalf("delete twice: %d", w.Code)
	}
	empty := c.do("p1", "GET", subscriptionsPath, "", "")
	if strings.TrimSpace(empty.Body.String()) != `{"subscriptions":[]}` {
		t.Fatalf("empty list: %s", empty.Body)
	}
	if w := c.do("p2", "GET", subscriptionsPath+"/"+other["id"], "", ""); w.Code != http.StatusOK {
		t.Fatalf("p2's own subscription: %d", w.Code)
	}
}

func TestSubscriptionsValidation(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	long := "http://127.0.0.1/" + strings.Repeat("a", 2048-len("http://127.0.0.1/")+1)
	tests := []struct {
		name, body, field, detail string
	}{
		{"malformed", `{"notificationUrl":`, "", "not valid JSON"},
		{"not an object", `["x"]`, "", "must be a JSON object"},
		{"empty body", ``, "", "not valid JSON"},
		{"trailing data", `{"notificationUrl":"http://127.0.0.1/","event":"label-status"} {}`, "", "data after the JSON object"},
		{"unknown field", `{"notificationUrl":"http://127.0.0.1/","event":"label-status","secret":"x"}`, "secret", "unknown field"},
		{"field name in another case", `{"NotificationUrl":"http://127.0.0.1/","event":"label-status"}`, "NotificationUrl", "unknown field"},
		{"event in upper case", `{"notificationUrl":"http://127.0.0.1/","EVENT":"label-status"}`, "EVENT", "unknown field"},
		{"url not UTF-8", "{\"notificationUrl\":\"http://127.0.0.1/\xff\",\"event\":\"label-status\"}", "notificationUrl", "not valid UTF-8"},
		{"missing url", `{"event":"label-status"}`, "notificationUrl", "required"},
		{"null url", `{"notificationUrl":null,"event":"label-status"}`, "notificationUrl", "required"},
		{"empty url", `{"notificationUrl":"","event":"label-status"}`, "notificationUrl", "required"},
		{"missing event", `{"notificationUrl":"http://127.0.0.1/"}`, "event", "required"},
		{"url not a string", `{"notificationUrl":5,"event":"label-status"}`, "notificationUrl", "must be a string"},
		{"event not a string", `{"notificationUrl":"http://127.0.0.1/","event":["label-status"]}`, "event", "must be a string"},
		{"bad event", `{"notificationUrl":"http://127.0.0.1/","event":"shipment-lost"}`, "event", "must be one of"},
		{"relative url", `{"notificationUrl":"/hooks","event":"label-status"}`, "notificationUrl", "absolute"},
		{"ftp url", `{"notificationUrl":"ftp://127.0.0.1/","event":"label-status"}`, "notificationUrl", "scheme"},
		{"user info", `{"notificationUrl":"http://user:pw@127.0.0.1/","event":"label-status"}`, "notificationUrl", "user info"},
		{"too long", fmt.Sprintf(`{"notificationUrl":%q,"event":"label-status"}`, long), "notificationUrl", "longer than 2048"},
		{"private address", `{"notificationUrl":"https://10.0.0.1/hook","event":"label-status"}`, "notificationUrl", "not allowed"},
		{"metadata address", `{"notificationUrl":"https://169.254.169.254/latest","event":"label-status"}`, "notificationUrl", "not allowed"},
		{"ipv6 loopback", `{"notificationUrl":"https://[::1]/hook","event":"label-status"}`, "notificationUrl", "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := problemOf(t, c.post("p1", tt.body), http.StatusBadRequest)
			if p.Field != tt.field || !strings.Contains(p.Detail, tt.detail) {
				t.Fatalf("problem %+v, want field %q and detail containing %q", p, tt.field, tt.detail)
			}
		})
	}
	// Exactly 2048 characters is accepted.
	ok := "http://127.0.0.1/" + strings.Repeat("a", 2048-len("http://127.0.0.1/"))
	if w := c.post("p1", fmt.Sprintf(`{"notificationUrl":%q,"event":"label-status"}`, ok)); w.Code != http.StatusCreated {
		t.Fatalf("2048-character URL: %d %s", w.Code, w.Body)
	}
	if list := decodeInto[map[string][]any](t, c.do("p1", "GET", subscriptionsPath, "", "")); len(list["subscriptions"]) != 1 {
		t.Fatalf("refused requests created subscriptions: %v", list)
	}
}

// Without allow_http and allow_networks, plain http and loopback names are
// refused.
func TestSubscriptionsDefaultPolicy(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, nil))
	p := problemOf(t, c.post("p1", `{"notificationUrl":"http://example.com/","event":"label-status"}`), http.StatusBadRequest)
	if p.Field != "notificationUrl" || !strings.Contains(p.Detail, "https") {
		t.Fatalf("http URL: %+v", p)
	}
	for _, u := range []string{"https://localhost/hook", "https://127.0.0.1/hook", "https://0.0.0.0/", "https://[fe80::1]/"} {
		p := problemOf(t, c.post("p1", fmt.Sprintf(`{"notificationUrl":%q,"event":"label-status"}`, u)), http.StatusBadRequest)
		if p.Field != "notificationUrl" || !strings.Contains(p.Detail, "not allowed") {
			t.Fatalf("%s: %+v", u, p)
		}
	}
}

func TestSubscriptionsBodyLimitsAndMediaType(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	okBody := `{"notificationUrl":"http://127.0.0.1/","event":"label-status"}`
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json-seq", "garbage;;"} {
		w := c.do("p1", "POST", subscriptionsPath, ct, okBody)
		problemOf(t, w, http.StatusUnsupportedMediaType)
		if w.Header().Get("Accept") != "application/json" {
			t.Fatalf("415 without Accept header")
		}
	}
	if w := c.do("p1", "POST", subscriptionsPath, "application/json; charset=utf-8", okBody); w.Code != http.StatusCreated {
		t.Fatalf("json with charset: %d %s", w.Code, w.Body)
	}
	big := `{"notificationUrl":"http://127.0.0.1/","event":"label-status","pad":"` + strings.Repeat("x", 64<<10) + `"}`
	problemOf(t, c.post("p1", big), http.StatusRequestEntityTooLarge)

	// Chunked (unknown length): the limit applies while reading.
	r := httptest.NewRequest("POST", subscriptionsPath, io.MultiReader(strings.NewReader(big)))
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/json")
	r = withVerifiedPartner(r, "p1")
	w := httptest.NewRecorder()
	if err := c.h.ServeHTTP(w, r, teapot); err != nil {
		t.Fatal(err)
	}
	problemOf(t, w, http.StatusRequestEntityTooLarge)
}

func TestSubscriptionsLimit(t *testing.T) {
	cfg := loopbackHooks()
	cfg.MaxSubscriptionsPerPartner = 2
	c := newSubsClient(t, startTestApp(t, cfg))
	sub := func(ev string) string { return fmt.Sprintf(`{"notificationUrl":"http://127.0.0.1/","event":%q}`, ev) }
	for _, ev := range []string{"label-status", "inbound-status"} {
		if w := c.post("p1", sub(ev)); w.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", ev, w.Code, w.Body)
		}
	}
	problemOf(t, c.post("p1", sub("receipt-received")), http.StatusConflict)
	if w := c.post("p1", sub("label-status")); w.Code != http.StatusOK {
		t.Fatalf("an existing subscription at the limit: %d %s", w.Code, w.Body)
	}
	if w := c.post("p2", sub("receipt-received")); w.Code != http.StatusCreated {
		t.Fatalf("the limit is per partner: %d %s", w.Code, w.Body)
	}
}

func TestSubscriptionsMethodsAuthAndRouting(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	for _, tt := range []struct{ method, path, allow string }{
		{"PUT", subscriptionsPath, "GET, HEAD, POST"},
		{"DELETE", subscriptionsPath, "GET, HEAD, POST"},
		{"PATCH", subscriptionsPath + "/sub_x", "GET, HEAD, DELETE"},
		{"POST", subscriptionsPath + "/sub_x", "GET, HEAD, DELETE"},
		{"GE", subscriptionsPath, "GET, HEAD, POST"},
	} {
		w := c.do("p1", tt.method, tt.path, "application/json", "{}")
		problemOf(t, w, http.StatusMethodNotAllowed)
		if got := w.Header().Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
	// No partner from the guard: 401, whatever headers the caller sends.
	w := c.do("", "GET", subscriptionsPath, "", "", "X-Partner-Id", "p1")
	problemOf(t, w, http.StatusUnauthorized)
	if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: %v", w.Header())
	}
	problemOf(t, c.do("p1", "GET", subscriptionsPath+"/a/b", "", ""), http.StatusNotFound)
	for _, p := range []string{"/api/fulfilment/v4/shipments", "/api/fulfilment/v4/subscriptionsx", "/api/fulfilment/v3/subscriptions", "/"} {
		if w := c.do("", "GET", p, "", ""); w.Code != http.StatusTeapot {
			t.Errorf("%s was not passed on: %d", p, w.Code)
		}
	}
}

// Before Start (or after Stop) the handler answers 503, not a panic.
func TestSubscriptionsNotRunning(t *testing.T) {
	c := newSubsClient(t, &fulfilment.App{})
	problemOf(t, c.do("p1", "GET", subscriptionsPath, "", ""), http.StatusServiceUnavailable)
}

func TestSubscriptionsDirective(t *testing.T) {
	for _, tt := range []struct{ in, err string }{
		{"fulfilment_subscriptions", ""},
		{"fulfilment_subscriptions x", "wrong argument count"},
		{"fulfilment_subscriptions {\n base /x\n}", "unknown fulfilment_subscriptions option"},
		{"fulfilment_subscriptions {\n read_timeout 5s\n}", ""},
		{"fulfilment_subscriptions {\n read_timeout 5s\n read_timeout 6s\n}", "given twice"},
		{"fulfilment_subscriptions {\n read_timeout soon\n}", "read_timeout"},
		{"fulfilment_subscriptions {\n read_timeout 11m\n}", "read_timeout"},
	} {
		var h SubscriptionsHandler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.in))
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
		}
	}
}
