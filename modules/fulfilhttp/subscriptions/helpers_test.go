package subscriptions

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap/zaptest"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// A real fulfilment app, and requests as the Bearer guard passes them on
// (fulfilmenttest).
var (
	startTestApp        = fulfilmenttest.StartWebhooksApp
	loopbackHooks       = fulfilmenttest.LoopbackHooks
	withVerifiedPartner = fulfilmenttest.WithVerifiedPartner
)

type subsClient struct {
	t *testing.T
	h *SubscriptionsHandler
}

func newSubsClient(t *testing.T, a *fulfilment.App) subsClient {
	return subsClient{t, &SubscriptionsHandler{app: a, logger: zaptest.NewLogger(t)}}
}

// teapot is the next handler: it shows that a request was passed on.
var teapot = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusTeapot)
	return nil
})

// do serves one request as partner (none if empty) and returns the answer.
func (c subsClient) do(partner, method, path, ctype, body string, hdr ...string) *httptest.ResponseRecorder {
	c.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	r = withVerifiedPartner(r, partner)
	w := httptest.NewRecorder()
	if err := c.h.ServeHTTP(w, r, teapot); err != nil {
		c.t.Fatalf("%s %s: handler error %v", method, path, err)
	}
	return w
}

func (c subsClient) post(partner, body string) *httptest.ResponseRecorder {
	return c.do(partner, "POST", subscriptionsPath, "application/json", body)
}

func decodeInto[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %q: %v", w.Body.String(), err)
	}
	return v
}

// problemOf checks a problem+json answer and returns it.
func problemOf(t *testing.T, w *httptest.ResponseRecorder, status int) fulfilhttp.Problem {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	p := decodeInto[fulfilhttp.Problem](t, w)
	if p.Status != status || p.Type == "" || p.Title == "" {
		t.Fatalf("problem body %+v", p)
	}
	return p
}
