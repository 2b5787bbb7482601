package tokenauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// Demo credentials and a real fulfilment app (fulfilmenttest).
const (
	tAcmeID       = fulfilmenttest.AcmeID
	tAcmeSecret   = fulfilmenttest.AcmeSecret
	tGlobexID     = fulfilmenttest.GlobexID
	tGlobexSecret = fulfilmenttest.GlobexSecret
)

var (
	testTokensConfig = fulfilmenttest.TokensConfig
	startTokensApp   = fulfilmenttest.StartTokensApp
	testSigner       = fulfilmenttest.Signer
	signTestToken    = fulfilmenttest.SignToken
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// upstreamSeen records what the next handler received.
type upstreamSeen struct {
	called    bool
	header    http.Header
	partner   string
	requestID string // {http.vars.fulfilment.request_id}, as a placeholder reads it
	// {http.vars.fulfilment.partner_id} and {http.vars.fulfilment.client_id},
	// as placeholders read them, and whether Caddy's vars matcher matched
	// each against the answer's identity.
	partnerVar, clientVar         string
	partnerMatched, clientMatched bool
}

func newAuthHandler(t testing.TB, a *fulfilment.App, h *AuthHandler) (*AuthHandler, *observer.ObservedLogs) {
	t.Helper()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	h.app, h.logger = a, zap.New(core)
	h.setup()
	return h, logs
}

func serveAuth(t testing.TB, h *AuthHandler, hdr ...string) (*httptest.ResponseRecorder, *upstreamSeen) {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/fulfilment/v4/shipments", nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	extra := new(caddyhttp.ExtraLogFields)
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{})
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)
	r = r.WithContext(ctx)
	seen := new(upstreamSeen)
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		seen.called = true
		seen.header = r.Header.Clone()
		seen.partner, _ = fulfilhttp.PartnerFromRequest(r)
		repl := caddyhttp.NewTestReplacer(r)
		seen.requestID = repl.ReplaceAll("{http.vars.fulfilment.request_id}", "")
		seen.partnerVar = repl.ReplaceAll("{http.vars.fulfilment.partner_id}", "")
		seen.clientVar = repl.ReplaceAll("{http.vars.fulfilment.client_id}", "")
		r = r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl))
		seen.partnerMatched = varsMatch(t, r, fulfilhttp.PartnerIDVar, seen.partner)
		seen.clientMatched = varsMatch(t, r, fulfilhttp.ClientIDVar, seen.clientVar)
		w.WriteHeader(http.StatusTeapot)
		return nil
	})
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatal(err)
	}
	return w, seen
}

// varsMatch runs Caddy's vars matcher ({name} equal to want) on r.
func varsMatch(t testing.TB, r *http.Request, name, want string) bool {
	t.Helper()
	ok, err := caddyhttp.VarsMatcher{name: {want}}.MatchWithError(r)
	if err != nil {
		t.Fatalf("vars matcher on %s: %v", name, err)
	}
	return ok && want != ""
}

func mustAuth(a *fulfilment.App) tokens.Client {
	c, ok := a.TokenService().Authenticate(tAcmeID, tAcmeSecret)
	if !ok {
		panic("test client does not authenticate")
	}
	return c
}

// bearerRequest is a GET of a resource with a fresh token of a's demo
// client, with Caddy's vars in its context, as it reaches the guard.
func bearerRequest(t testing.TB, a *fulfilment.App) *http.Request {
	t.Helper()
	tok, err := a.TokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api/fulfilment/v4/shipments", nil)
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{}))
}
