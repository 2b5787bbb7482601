// Package ingest is the push endpoint of the change feeds
// (http.handlers.fulfilment_ingest), for a warehouse system that calls out
// instead of being polled.
package ingest

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func init() {
	caddy.RegisterModule(new(IngestHandler))
}

// Defaults and limits of IngestHandler.
const (
	defaultIngestMaxBody     = 8 << 20
	defaultIngestReadTimeout = 60 * time.Second
	// minIngestSecretLen: the shared secret is a key, not a password: at
	// least 32 bytes, as every generated secret of the gateway.
	minIngestSecretLen = 32
)

// IngestHandler is the push alternative to polling a feed: a WMS that can
// call out POSTs its changes here, in the feed's page format without "next":
//
//	POST <any path routed here>
//	Authorization: Bearer <shared secret>
//	Content-Type: application/json
//	{"changes":[{"id","partner","kind","entity","change",...}, ...]}
//
// The changes go through the named feed's mapping exactly as polled ones do
// and are idempotent by change id: a change pushed again (or also polled)
// produces no second event. Answers: 200 with what was done
// ({"read","duplicates","rejected","events","deliveries","rejected_changes"});
// 400 malformed body; 401 wrong or missing secret; 405 not POST; 408 body
// not received within read_timeout; 413 body too large; 415 not JSON; 429
// with Retry-After, a wrong secret after too many failures (the token
// endpoint's throttle: per feed and per address; the right secret is never
// throttled); 503 the app or feed is not running, or the events could not
// be queued (the WMS should retry). Errors are problem+json.
//
// Serve it on an internal listener only (for example a site bound to
// 127.0.0.1 or a private network), never on the partner-facing one.
type IngestHandler struct {
	// Feed is the name of a feed of the fulfilment app (it may have no url:
	// a push-only feed). Required.
	Feed string `json:"feed"`
	// Secret is the shared secret the WMS sends as a Bearer token, at least
	// 32 bytes (`caddy fulfilment secret` makes one); use a placeholder
	// such as {env.WMS_INGEST_SECRET}. Required.
	Secret string `json:"secret"`
	// MaxBodyBytes is the largest body accepted. Default 8 MiB.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	// ReadTimeout bounds the wait for the request body, counted from the
	// end of the headers: 408 after it. Default 60s.
	ReadTimeout caddy.Duration `json:"read_timeout,omitempty"`

	app     *fulfilment.App
	logger  *zap.Logger
	secret  [32]byte
	maxBody int64
}

// CaddyModule returns the Caddy module information.
func (*IngestHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_ingest",
		New: func() caddy.Module { return new(IngestHandler) },
	}
}

// Provision resolves the secret and finds the fulfilment app and the feed.
func (h *IngestHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	app, err := fulfilhttp.LoadApp(ctx)
	if err != nil {
		return err
	}
	return h.provision(app)
}

func (h *IngestHandler) provision(app *fulfilment.App) error {
	secret := caddy.NewReplacer().ReplaceKnown(h.Secret, "")
	if len(secret) < minIngestSecretLen {
		return fmt.Errorf("fulfilment_ingest: the secret has %d bytes; it needs at least %d (generate one with `caddy fulfilment secret`; is the environment variable set?)", len(secret), minIngestSecretLen)
	}
	if err := fulfilhttp.CheckReadTimeout(h.ReadTimeout); err != nil {
		return fmt.Errorf("fulfilment_ingest: %w", err)
	}
	h.secret = sha256.Sum256([]byte(secret))
	h.maxBody = h.MaxBodyBytes
	if h.maxBody <= 0 {
		h.maxBody = defaultIngestMaxBody
	}
	h.app = app
	for _, c := range app.Feeds {
		if c != nil && c.Name == h.Feed {
			return nil
		}
	}
	return fmt.Errorf("fulfilment_ingest: no feed named %q in the fulfilment app", h.Feed)
}

// authorized compares the Bearer secret in constant time (hashes of equal
// length, so not even the length leaks).
func (h *IngestHandler) authorized(r *http.Request) bool {
	token, ok := tokens.ParseBearer(r.Header.Get("Authorization")) // the guard's parser: scheme case-insensitive
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], h.secret[:]) == 1
}

// ingestThrottleKey is the ingest endpoint's key in the token throttle's
// per-client table (client ids cannot contain a colon, so no clash).
func ingestThrottleKey(feedName string) string { return "ingest:" + feedName }

// refuse answers a missing or wrong secret: 401, or 429 with Retry-After
// once the feed or the address is over its failure limit (the token
// endpoint's throttle and limits). While the gateway is not running there
// is no throttle, and the answer is 401.
func (h *IngestHandler) refuse(w http.ResponseWriter, r *http.Request) {
	addr := fulfilhttp.ClientAddr(r)
	if svc := h.app.TokenService(); svc != nil {
		if wait := svc.Throttle().Failed(ingestThrottleKey(h.Feed), addr); wait > 0 {
			h.logger.Info("ingest request throttled", zap.String("feed", h.Feed), zap.String("remote_ip", addr))
			w.Header().Set("Retry-After", strconv.Itoa(tokens.RetryAfterSeconds(wait)))
			fulfilhttp.WriteProblem(w, http.StatusTooManyRequests, "too-many-failures",
				"too many requests with a wrong secret; retry after the number of seconds in Retry-After")
			return
		}
	}
	h.logger.Info("ingest request with a missing or wrong secret", zap.String("feed", h.Feed), zap.String("remote_ip", addr))
	w.Header().Set("WWW-Authenticate", `Bearer realm="fulfilment-ingest"`)
	fulfilhttp.WriteProblem(w, http.StatusUnauthorized, "unauthorized", "the ingest secret is missing or wrong")
}

// ServeHTTP implements caddyhttp.MiddlewareHandler; it answers every request
// it gets.
func (h *IngestHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fulfilhttp.WriteProblem(w, http.StatusMethodNotAllowed, "method-not-allowed", "use POST")
		return nil
	}
	if !h.authorized(r) {
		h.refuse(w, r)
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		fulfilhttp.WriteProblem(w, http.StatusUnsupportedMediaType, "unsupported-media-type", "send Content-Type: application/json")
		return nil
	}
	body, err := fulfilhttp.ReadBody(w, r, h.maxBody, fulfilhttp.BodyReadTimeout(h.ReadTimeout, defaultIngestReadTimeout), h.logger)
	if err != nil {
		fulfilhttp.WriteProblemBody(w, fulfilhttp.BodyProblem(err,
			fmt.Sprintf("the body is larger than %d bytes; push fewer changes at a time", h.maxBody)))
		return nil
	}
	if !h.app.Running() {
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the gateway is not running")
		return nil
	}
	f := h.app.FeedReader(h.Feed)
	if f == nil {
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the feed is not running")
		return nil
	}
	res, err := f.IngestBody(body)
	if errors.Is(err, feed.ErrMalformedPage) {
		fulfilhttp.WriteProblem(w, http.StatusBadRequest, "malformed-changes", err.Error())
		return nil
	}
	if err != nil {
		h.logger.Error("queueing pushed changes", zap.String("feed", h.Feed), zap.Error(err))
		w.Header().Set("Retry-After", "1")
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the changes could not be queued; retry")
		return nil
	}
	if res.RejectedChanges == nil {
		res.RejectedChanges = []feed.Rejected{}
	}
	fulfilhttp.WriteJSON(w, http.StatusOK, "application/json", res)
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*IngestHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*IngestHandler)(nil)
	_ caddyfile.Unmarshaler       = (*IngestHandler)(nil)
)
