package ingest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap/zaptest"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

const ingestSecret = "a-shared-secret-of-32-characters"

// startIngestApp starts a real fulfilment app with a push-only feed "push"
// and two static partners, and returns an ingest handler for it.
func startIngestApp(t *testing.T, maxBody int64) (*fulfilment.App, *IngestHandler) {
	t.Helper()
	t.Setenv("FEED_INGEST_SECRET", ingestSecret)
	a := fulfilmenttest.StartApp(t, &fulfilment.App{
		DataDir:  t.TempDir(),
		Webhooks: fulfilmenttest.LoopbackHooks(),
		Tokens: &fulfilment.TokensConfig{Partners: []fulfilment.PartnerConfig{
			{ID: "cons", Consolidation: true, WebhookKey: strings.Repeat("k", 32)},
			{ID: "plain", WebhookKey: strings.Repeat("q", 32)},
		}},
		Feeds: []*fulfilment.FeedConfig{{Name: "push"}},
	})
	h := &IngestHandler{Feed: "push", Secret: "{env.FEED_INGEST_SECRET}", MaxBodyBytes: maxBody}
	h.logger = zaptest.NewLogger(t)
	if err := h.provision(a); err != nil {
		t.Fatal(err)
	}
	return a, h
}

func ingest(t *testing.T, h *IngestHandler, method, auth, ctype, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "/ingest", strings.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, teapot); err != nil {
		t.Fatal(err)
	}
	return w
}

// teapot is the next handler: it shows that a request was passed on.
var teapot = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusTeapot)
	return nil
})
