package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func TestIngestHandler(t *testing.T) {
	a, h := startIngestApp(t, 4096)
	// A subscription so that deliveries are queued (the receiver fails, so
	// they stay queued; what matters is what was queued).
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer rcv.Close()
	svc := a.WebhookService()
	for _, ev := range []string{"shipment-created", "adjustment-posted"} {
		if _, _, err := svc.Subscriptions().Create(context.Background(), "cons", rcv.URL+"/hook", ev); err != nil {
			t.Fatal(err)
		}
	}
	bearer := "Bearer " + ingestSecret
	body := `{"changes":[
		{"id":"c1","partner":"cons","kind":"shipment","entity":"s1","change":"created"},
		{"id":"c2","partner":"cons","kind":"adjustment","entity":"a1","change":"posted","products":["p1","p2","p3"]},
		{"id":"c3","partner":"nobody","kind":"shipment","entity":"s2","change":"created"},
		{"id":"c4","partner":"plain","kind":"shipment","entity":"s3","change":"created"}
	]}`

	w := ingest(t, h, "POST", bearer, "application/json", body)
	var res feed.Result
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &res) != nil {
		t.Fatalf("push: %d %s", w.Code, w.Body)
	}
	if res.Read != 4 || res.Events != 4 || res.Deliveries != 4 || res.Rejected != 1 ||
		len(res.RejectedChanges) != 1 || !strings.Contains(res.RejectedChanges[0].Reason, "unknown partner") {
		t.Fatalf("first push: %s", w.Body)
	}
	// Idempotent by change id.
	w = ingest(t, h, "POST", "bearer "+ingestSecret, "application/json; charset=utf-8", body) // scheme is case-insensitive (RFC 9110)
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 || res.Duplicates != 4 || res.Deliveries != 0 {
		t.Fatalf("second push: %d %s", w.Code, w.Body)
	}
	if q, _ := svc.Depth(); q != 4 {
		t.Fatalf("queue depth %d, want 4", q)
	}

	for _, tt := range []struct {
		name, method, auth, ctype, body string
		status                          int
		kind                            string
	}{
		{"no secret", "POST", "", "application/json", body, 401, "unauthorized"},
		{"wrong secret", "POST", "Bearer " + strings.Repeat("x", len(ingestSecret)), "application/json", body, 401, "unauthorized"},
		{"secret prefix", "POST", "Bearer " + ingestSecret[:20], "application/json", body, 401, "unauthorized"},
		{"basic auth", "POST", "Basic " + ingestSecret, "application/json", body, 401, "unauthorized"},
		{"GET", "GET", bearer, "", "", 405, "method-not-allowed"},
		{"not JSON", "POST", bearer, "text/plain", body, 415, "unsupported-media-type"},
		{"too large", "POST", bearer, "application/json", `{"changes":[` + strings.Repeat(" ", 5000) + `]}`, 413, "payload-too-large"},
		{"garbage", "POST", bearer, "application/json", `{"changes":[`, 400, "malformed-changes"},
		{"changes not array", "POST", bearer, "application/json", `{"changes":"x"}`, 400, "malformed-changes"},
		{"array body", "POST", bearer, "application/json", `[]`, 400, "malformed-changes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := ingest(t, h, tt.method, tt.auth, tt.ctype, tt.body)
			var p fulfilhttp.Problem
			if w.Code != tt.status || w.Header().Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(w.Body.Bytes(), &p) != nil || !strings.HasSuffix(p.Type, "#"+tt.kind) {
				t.Fatalf("%d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			if tt.status == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	if q, _ := svc.Depth(); q != 4 {
		t.Fatalf("queue depth after refused requests %d, want 4", q)
	}
}

func TestIngestProvisionRefuses(t *testing.T) {
	a, _ := startIngestApp(t, 0)
	t.Setenv("SHORT_SECRET", "short")
	t.Setenv("SECRET_31", strings.Repeat("s", 31))
	for name, h := range map[string]*IngestHandler{
		"short secret":   {Feed: "push", Secret: "{env.SHORT_SECRET}"},
		"31-byte secret": {Feed: "push", Secret: "{env.SECRET_31}"},
		"unset env var":  {Feed: "push", Secret: "{env.FEED_NOT_SET_ANYWHERE}"},
		"unknown feed":   {Feed: "nope", Secret: "{env.FEED_INGEST_SECRET}"},
	} {
		if err := h.provision(a); err == nil {
			t.Errorf("%s: provisioned", name)
		}
	}
}

// Wrong secrets are throttled as wrong client secrets are at the token
// endpoint (10 per minute by default): then 429 with Retry-After, and the
// right secret still gets through.
func TestIngestThrottlesWrongSecrets(t *testing.T) {
	_, h := startIngestApp(t, 0)
	body := `{"changes":[]}`
	for i := range 10 {
		w := ingest(t, h, "POST", "Bearer wrong-"+strconv.Itoa(i), "application/json", body)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d %s, want 401 below the limit", i+1, w.Code, w.Body)
		}
	}
	w := ingest(t, h, "POST", "Bearer wrong-again", "application/json", body)
	var p fulfilhttp.Problem
	if w.Code != http.StatusTooManyRequests || json.Unmarshal(w.Body.Bytes(), &p) != nil || !strings.HasSuffix(p.Type, "#too-many-failures") {
		t.Fatalf("11th wrong secret: %d %s, want 429 too-many-failures", w.Code, w.Body)
	}
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("429 with Retry-After %q, want 1..60 seconds", w.Header().Get("Retry-After"))
	}
	if w := ingest(t, h, "POST", "Bearer "+ingestSecret, "application/json", body); w.Code != http.StatusOK {
		t.Fatalf("the right secret while throttled: %d %s, want 200", w.Code, w.Body)
	}
}

func TestIngestCaddyfile(t *testing.T) {
	h := new(IngestHandler)
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("fulfilment_ingest wms {\n secret {env.S}\n max_body 1MiB\n read_timeout 30s\n}"))
	if err != nil || h.Feed != "wms" || h.Secret != "{env.S}" || h.MaxBodyBytes != 1<<20 || h.ReadTimeout != caddy.Duration(30*time.Second) {
		t.Fatalf("%+v %v", h, err)
	}
	for in, want := range map[string]string{
		"fulfilment_ingest":                                                         "feed name",
		"fulfilment_ingest wms":                                                     "secret is required",
		"fulfilment_ingest wms {\n colour blue\n}":                                  "unknown fulfilment_ingest option",
		"fulfilment_ingest wms {\n secret x\n max_body lots\n}":                     "max_body",
		"fulfilment_ingest wms extra":                                               "argument",
		"fulfilment_ingest wms {\n secret x\n read_timeout forever\n}":              "read_timeout",
		"fulfilment_ingest wms {\n secret x\n read_timeout 1s\n read_timeout 2s\n}": "given twice",
	} {
		err := new(IngestHandler).UnmarshalCaddyfile(caddyfile.NewTestDispenser(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}
