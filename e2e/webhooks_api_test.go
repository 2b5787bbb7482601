package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The subscriptions API through the real binary, behind the Bearer guard:
// every status code the README lists for subscriptions.
func TestWebhooksSubscriptionsAPI(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n max_subscriptions_per_partner 3")
	acme := g.token(t, "acme-client", whAcmeSecret)
	other := g.token(t, "other-client", whOtherSecret)
	coll := g.Base + "/api/fulfilment/v4/subscriptions"
	post := func(token, ctype, body string) (int, http.Header, []byte) {
		return do(t, "POST", coll, strings.NewReader(body), "Authorization", "Bearer "+token, "Content-Type", ctype)
	}
	field := func(b []byte) string {
		var p struct{ Field string }
		_ = json.Unmarshal(b, &p)
		return p.Field
	}

	// No token, a bad token, a partner-sent identity header: 401.
	if s, h, _ := do(t, "GET", coll, nil, "X-Partner-Id", "acme"); s != 401 || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d %v", s, h)
	}
	if s, _, _ := do(t, "GET", coll, nil, "Authorization", "Bearer not-a-token"); s != 401 {
		t.Fatalf("bad token: %d", s)
	}

	body := `{"notificationUrl":"http://127.0.0.1:9/hooks","event":"shipment-shipped"}`
	s, h, b := post(acme, "application/json", body)
	if s != 201 || !strings.HasPrefix(h.Get("Location"), "/api/fulfilment/v4/subscriptions/sub_") {
		t.Fatalf("create: %d %v %s", s, h, b)
	}
	var sub map[string]string
	_ = json.Unmarshal(b, &sub)
	if sub["event"] != "shipment-shipped" || sub["notificationUrl"] != "http://127.0.0.1:9/hooks" {
		t.Fatalf("created %s", b)
	}
	if _, err := time.Parse(time.RFC3339, sub["createdAt"]); err != nil {
		t.Fatalf("createdAt %q: %v", sub["createdAt"], err)
	}
	if s, _, b2 := post(acme, "application/json", body); s != 200 || !strings.Contains(string(b2), sub["id"]) {
		t.Fatalf("same again: %d %s", s, b2)
	}
	if s, _, b2 := do(t, "GET", g.Base+h.Get("Location"), nil, "Authorization", "Bearer "+acme); s != 200 || !strings.Contains(string(b2), sub["id"]) {
		t.Fatalf("get: %d %s", s, b2)
	}
	if s, _, b2 := do(t, "GET", coll, nil, "Authorization", "Bearer "+acme); s != 200 || !strings.Contains(string(b2), `"subscriptions":[{"id":"`+sub["id"]) {
		t.Fatalf("list: %d %s", s, b2)
	}
	// The other partner sees nothing of it.
	if s, _, b2 := do(t, "GET", coll, nil, "Authorization", "Bearer "+other); s != 200 || string(b2) != `{"subscriptions":[]}` {
		t.Fatalf("other's list: %d %s", s, b2)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if s, _, _ := do(t, m, g.Base+h.Get("Location"), nil, "Authorization", "Bearer "+other); s != 404 {
			t.Fatalf("other %s: %d", m, s)
		}
	}

	for _, tt := range []struct{ body, field string }{
		{`{"notificationUrl":`, ""},
		{`{"notificationUrl":"http://127.0.0.1/","event":"label-status","x":1}`, "x"},
		{`{"event":"label-status"}`, "notificationUrl"},
		{`{"notificationUrl":"http://127.0.0.1/"}`, "event"},
		{`{"notificationUrl":"http://127.0.0.1/","event":"order-created"}`, "event"},
		{`{"notificationUrl":"ftp://127.0.0.1/","event":"label-status"}`, "notificationUrl"},
		{`{"notificationUrl":"http://u:p@127.0.0.1/","event":"label-status"}`, "notificationUrl"},
		{fmt.Sprintf(`{"notificationUrl":"http://127.0.0.1/%s","event":"label-status"}`, strings.Repeat("a", 2040)), "notificationUrl"},
		{`{"notificationUrl":"https://10.0.0.1/","event":"label-status"}`, "notificationUrl"},
		{`{"notificationUrl":"https://169.254.169.254/latest/meta-data","event":"label-status"}`, "notificationUrl"},
	} {
		s, h, b := post(acme, "application/json", tt.body)
		if s != 400 || h.Get("Content-Type") != "application/problem+json" || field(b) != tt.field {
			t.Errorf("%.60s: %d %s, want 400 naming %q", tt.body, s, b, tt.field)
		}
	}
	if s, _, _ := post(acme, "text/plain", body); s != 415 {
		t.Fatalf("text/plain: %d", s)
	}
	if s, _, _ := post(acme, "application/json", `{"notificationUrl":"`+strings.Repeat("a", 70<<10)+`"}`); s != 413 {
		t.Fatalf("70 KiB: %d", s)
	}
	for _, ev := range []string{"label-status", "inbound-status"} {
		if s, _, b := post(acme, "application/json", fmt.Sprintf(`{"notificationUrl":"http://127.0.0.1:9/","event":%q}`, ev)); s != 201 {
			t.Fatalf("%s: %d %s", ev, s, b)
		}
	}
	if s, _, b := post(acme, "application/json", `{"notificationUrl":"http://127.0.0.1:9/","event":"receipt-received"}`); s != 409 {
		t.Fatalf("over the limit: %d %s", s, b)
	}
	if s, h, _ := do(t, "PUT", coll, nil, "Authorization", "Bearer "+acme); s != 405 || h.Get("Allow") != "GET, HEAD, POST" {
		t.Fatalf("PUT: %d %v", s, h)
	}
	if s, _, _ := do(t, "DELETE", g.Base+h.Get("Location"), nil, "Authorization", "Bearer "+acme); s != 204 {
		t.Fatalf("delete: %d", s)
	}
	if s, _, _ := do(t, "GET", g.Base+h.Get("Location"), nil, "Authorization", "Bearer "+acme); s != 404 {
		t.Fatalf("get after delete: %d", s)
	}
	// Another path behind the guard goes on to the next handler.
	if s, _, b := do(t, "GET", g.Base+"/api/fulfilment/v4/shipments", nil, "Authorization", "Bearer "+acme); s != 404 || string(b) != "not a subscriptions path" {
		t.Fatalf("next handler: %d %s", s, b)
	}
}

// Without allow_networks, loopback, private and link-local targets are
// refused at registration, whether literal or by name.
func TestWebhooksSSRFAtRegistration(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http")
	tok := g.token(t, "acme-client", whAcmeSecret)
	for _, u := range []string{
		"http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:8080/",
		"http://localhost/hook", "http://[::1]/", "http://0.0.0.0/", "http://192.168.1.1/", "http://[fd00::1]/",
	} {
		s, _, b := do(t, "POST", g.Base+"/api/fulfilment/v4/subscriptions",
			strings.NewReader(fmt.Sprintf(`{"notificationUrl":%q,"event":"label-status"}`, u)),
			"Authorization", "Bearer "+tok, "Content-Type", "application/json")
		if s != 400 || !strings.Contains(string(b), `"field":"notificationUrl"`) || !strings.Contains(string(b), "not allowed") {
			t.Errorf("%s: %d %s, want 400 not allowed", u, s, b)
		}
	}
}

// Addresses are checked again at every delivery, on the address dialled: a
// subscription registered while 127.0.0.0/8 was allowed gets nothing once
// the gateway restarts without the allowance; the attempt fails and the
// receiver sees no request.
func TestWebhooksSSRFAtDelivery(t *testing.T) {
	t.Parallel()
	g := startHooksGateway(t, "allow_http\n allow_networks 127.0.0.0/8\n timeout 1s\n max_attempts 2\n retry_period 10s")
	tok := g.token(t, "acme-client", whAcmeSecret)
	gr := newWhGoReceiver(t, whOK200)
	sub := g.subscribe(t, tok, gr.URL+"/hook", "label-status")
	g.Stop()
	if err := writeCaddyfile(g.gateway, webhooksCaddyfile("allow_http\n timeout 1s\n max_attempts 2\n retry_period 10s")); err != nil {
		t.Fatal(err)
	}
	g.Restart()
	id := g.sendTest(t, sub)
	var dead []whDelivery
	whEventually(t, whTimeout, "refused delivery dead", func() bool {
		dead = g.deliveries(t, "dead", "")
		return len(dead) == 1
	})
	if dead[0].ID != id || !strings.Contains(dead[0].Log[0].Error, "not allowed") {
		t.Fatalf("dead delivery %+v, want a refused address", dead[0])
	}
	if n := len(gr.attempts(id)); n != 0 {
		t.Fatalf("the receiver on a refused address got %d requests", n)
	}
}
