package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func TestAdminWebhooksOperations(t *testing.T) {
	// One attempt, then dead: the partner "ghost" has no webhook key, so
	// every attempt fails without any network traffic.
	app := loadTestConfig(t, `{"allow_http":true,"allow_networks":["127.0.0.0/8"],"max_attempts":1,"retry_period":"1m"}`)
	svc := app.WebhookService()
	sub, _, err := svc.Subscriptions().Create(context.Background(), "ghost", "http://127.0.0.1:9/hook", webhooks.EventLabelStatus)
	if err != nil {
		t.Fatal(err)
	}

	status, body := adminDo(t, "POST", "/fulfilment/webhooks/test", fmt.Sprintf(`{"subscription":%q}`, sub.ID))
	if status != http.StatusAccepted {
		t.Fatalf("test event: %d %s", status, body)
	}
	var sent struct{ Delivery string }
	if err := json.Unmarshal(body, &sent); err != nil || sent.Delivery == "" {
		t.Fatalf("test event answer %s", body)
	}

	var dead struct{ Deliveries []webhooks.DeliveryInfo }
	deadline := time.Now().Add(10 * time.Second)
	for len(dead.Deliveries) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the failing test delivery did not go dead within 10s")
		}
		time.Sleep(20 * time.Millisecond)
		status, body = adminDo(t, "GET", "/fulfilment/webhooks/dead?subscription="+sub.ID+"&partner=ghost&limit=5", "")
		if status != http.StatusOK {
			t.Fatalf("dead: %d %s", status, body)
		}
		dead.Deliveries = nil
		if err := json.Unmarshal(body, &dead); err != nil {
			t.Fatal(err)
		}
	}
	d := dead.Deliveries[0]
	if d.ID != sent.Delivery || d.Attempts != 1 || len(d.Log) != 1 || !strings.Contains(d.Log[0].Error, "webhook key") {
		t.Fatalf("dead delivery %+v", d)
	}
	if status, body = adminDo(t, "GET", "/fulfilment/webhooks/dead?partner=someone-else", ""); status != http.StatusOK || !strings.Contains(string(body), `"deliveries":[]`) {
		t.Fatalf("dead filtered by another partner: %d %s", status, body)
	}
	// The depth counters change right after the settlement's commit, which
	// the dead list reads: a read in between still sees the delivery queued.
	for deadline = time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		status, body = adminDo(t, "GET", "/fulfilment/webhooks/depth", "")
		if status == http.StatusOK && strings.Contains(string(body), `"dead":1`) && strings.Contains(string(body), `"queued":0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("depth after the delivery went dead: %d %s, want dead 1 and queued 0", status, body)
		}
	}

	if status, body = adminDo(t, "POST", "/fulfilment/webhooks/replay", fmt.Sprintf(`{"delivery":%q}`, d.ID)); status != http.StatusOK || !strings.Contains(string(body), `"replayed":1`) {
		t.Fatalf("replay: %d %s", status, body)
	}
	// It fails again and is dead again; then replay by subscription.
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, body = adminDo(t, "GET", "/fulfilment/webhooks/dead", "")
		if strings.Contains(string(body), d.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replayed delivery did not come back dead: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status, body = adminDo(t, "POST", "/fulfilment/webhooks/replay", fmt.Sprintf(`{"subscription":%q,"since":"2000-01-01T00:00:00Z"}`, sub.ID)); status != http.StatusOK || !strings.Contains(string(body), `"replayed":1`) {
		t.Fatalf("replay subscription: %d %s", status, body)
	}
	if status, body = adminDo(t, "POST", "/fulfilment/webhooks/replay", fmt.Sprintf(`{"subscription":%q,"since":"2999-01-01T00:00:00Z"}`, sub.ID)); status != http.StatusOK || !strings.Contains(string(body), `"replayed":0`) {
		t.Fatalf("replay subscription in the future: %d %s", status, body)
	}
}

func TestAdminWebhooksErrors(t *testing.T) {
	loadTestConfig(t, `{}`)
	for _, tt := range []struct {
		method, target, body string
		status               int
		msg                  string
	}{
		{"GET", "/fulfilment/webhooks/nothing", "", 404, "unknown webhooks operation"},
		{"GET", "/fulfilment/webhooks/test", "", 405, "use POST"},
		{"POST", "/fulfilment/webhooks/depth", "", 405, "use GET"},
		{"POST", "/fulfilment/webhooks/test", `{}`, 400, "subscription: required"},
		{"POST", "/fulfilment/webhooks/test", `{"subscription":"sub_nope"}`, 404, "not found"},
		{"POST", "/fulfilment/webhooks/test", `{"sub":"x"}`, 400, "invalid JSON"},
		{"POST", "/fulfilment/webhooks/test", `not json`, 400, "invalid JSON"},
		{"GET", "/fulfilment/webhooks/queued?limit=0", "", 400, "limit must be"},
		{"GET", "/fulfilment/webhooks/queued?limit=x", "", 400, "limit must be"},
		{"GET", "/fulfilment/webhooks/dead?colour=red", "", 400, "unknown parameter"},
		{"POST", "/fulfilment/webhooks/replay", `{}`, 400, "give either"},
		{"POST", "/fulfilment/webhooks/replay", `{"delivery":"a","subscription":"b"}`, 400, "give either"},
		{"POST", "/fulfilment/webhooks/replay", `{"delivery":"whd_nope"}`, 404, "not found"},
		{"POST", "/fulfilment/webhooks/replay", `{"subscription":"s","since":"yesterday"}`, 400, "RFC 3339"},
	} {
		status, body := adminDo(t, tt.method, tt.target, tt.body)
		if status != tt.status || !strings.Contains(string(body), tt.msg) {
			t.Errorf("%s %s %s: %d %s, want %d %q", tt.method, tt.target, tt.body, status, body, tt.status, tt.msg)
		}
	}
	if status, body := adminDo(t, "GET", "/fulfilment/webhooks/queued", ""); status != 200 || strings.TrimSpace(string(body)) != `{"deliveries":[]}` {
		t.Fatalf("empty queue: %d %s", status, body)
	}
}
