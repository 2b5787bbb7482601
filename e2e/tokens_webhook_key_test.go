package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

const (
	wkSecret     = "keyless-client-secret-e9d29cz3yLuEli5q3LnN9XmqozrDnq-BA4qKhgAh31w"
	wkConfigured = "configured-webhook-key-0123456789abcdef0123"
)

// keylessCaddyfile has one static partner; webhookKeyLine is empty or a
// webhook_key line.
func keylessCaddyfile(webhookKeyLine string) string {
	return `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
		tokens {
			partner keyless {
				` + webhookKeyLine + `
				client keyless-client ` + wkSecret + `
			}
		}
		webhooks {
			allow_http
			allow_networks 127.0.0.0/8
			timeout 2s
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

type signedHook struct{ body, sig string }

// A static partner without webhook_key gets a generated key, so its
// webhooks are delivered (not dead for want of a key); rotating it through
// the CLI answers the new key once, which then signs, across a restart; an
// explicit webhook_key wins and cannot be rotated (409, names the Caddyfile).
func TestTokensStaticPartnerWebhookKey(t *testing.T) {
	t.Parallel()
	hooks := make(chan signedHook, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- signedHook{body: string(b), sig: r.Header.Get("x-hook-signature")}
	}))
	t.Cleanup(recv.Close)
	next := func(what string) signedHook {
		t.Helper()
		select {
		case h := <-hooks:
			return h
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no webhook within 30 s", what)
		}
		return signedHook{}
	}

	port := freePort(t)
	g := &hooksGateway{gateway: startGateway(t, keylessCaddyfile(""), "PORT="+strconv.Itoa(port)),
		Base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitHTTP(t, g.Base+"/api/auth/token")
	sub := g.subscribe(t, g.token(t, "keyless-client", wkSecret), recv.URL+"/hook", "shipment-shipped")

	g.sendTest(t, sub)
	if h := next("generated key"); h.sig == "" || h.body == "" {
		t.Fatalf("unsigned webhook: %+v", h)
	}
	var shown struct {
		HasWebhookKey    bool   `json:"has_webhook_key"`
		WebhookKeySource string `json:"webhook_key_source"`
	}
	cliJSON(t, &repoGateway{gateway: g.gateway}, &shown, "partner", "show", "keyless")
	if !shown.HasWebhookKey || shown.WebhookKeySource != "generated" {
		t.Fatalf("partner show: %+v", shown)
	}

	var rotated struct {
		WebhookKey string `json:"webhook_key"`
	}
	cliJSON(t, &repoGateway{gateway: g.gateway}, &rotated, "partner", "rotate-webhook-key", "keyless")
	if len(rotated.WebhookKey) < 43 {
		t.Fatalf("rotate answered %+v", rotated)
	}
	g.sendTest(t, sub)
	if h := next("rotated key"); !webhooks.Verify([]byte(rotated.WebhookKey), []byte(h.body), h.sig) {
		t.Fatalf("webhook not signed with the rotated key: %+v", h)
	}
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "show", "keyless")
	if err != nil || strings.Contains(out, rotated.WebhookKey) {
		t.Fatalf("partner show leaks the key or failed: %v\n%s", err, out)
	}

	// A restart keeps the rotated key.
	g.Stop()
	g.Restart()
	waitHTTP(t, g.Base+"/api/auth/token")
	g.sendTest(t, sub)
	if h := next("after restart"); !webhooks.Verify([]byte(rotated.WebhookKey), []byte(h.body), h.sig) {
		t.Fatalf("after a restart the webhook is not signed with the rotated key: %+v", h)
	}

	// An explicit webhook_key wins, and is not rotatable here.
	g.Reload(keylessCaddyfile("webhook_key " + wkConfigured))
	g.sendTest(t, sub)
	if h := next("configured key"); !webhooks.Verify([]byte(wkConfigured), []byte(h.body), h.sig) {
		t.Fatalf("webhook not signed with the configured key: %+v", h)
	}
	out, err = g.CLI("fulfilment", "--address", g.Admin, "partner", "rotate-webhook-key", "keyless")
	if err == nil || !strings.Contains(out, "409") || !strings.Contains(out, "Caddyfile") {
		t.Fatalf("rotating a configured key: %v\n%s", err, out)
	}
	status, _, body := do(t, http.MethodPost, "http://"+g.Admin+"/fulfilment/partners/keyless/webhook-key/rotate", nil)
	var apiErr struct{ Error string }
	if status != http.StatusConflict || json.Unmarshal(body, &apiErr) != nil || !strings.Contains(apiErr.Error, "Caddyfile") {
		t.Fatalf("admin API rotating a configured key: %d %s", status, body)
	}

	// A short webhook_key is refused at reload with a clear message; the
	// running config stays.
	if err := writeCaddyfile(g.gateway, keylessCaddyfile("webhook_key too-short-0123456789")); err != nil {
		t.Fatal(err)
	}
	out, err = g.CLI("reload", "--config", "Caddyfile", "--adapter", "caddyfile", "--address", g.Admin, "--force")
	if err == nil || !strings.Contains(out, "webhook_key") || !strings.Contains(out, "at least 32") {
		t.Fatalf("short webhook_key: %v\n%s", err, out)
	}
	g.sendTest(t, sub)
	if h := next("after a refused reload"); !webhooks.Verify([]byte(wkConfigured), []byte(h.body), h.sig) {
		t.Fatalf("refused reload changed the key: %+v", h)
	}
}
