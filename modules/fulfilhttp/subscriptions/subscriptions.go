// Package subscriptions is the partners' webhook subscriptions API
// (http.handlers.fulfilment_subscriptions), which also serves the OpenAPI
// document, behind the Bearer guard.
package subscriptions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

func init() {
	caddy.RegisterModule(new(SubscriptionsHandler))
}

const (
	// subscriptionsPath is the collection of the subscriptions API; a
	// subscription is subscriptionsPath + "/" + id.
	subscriptionsPath = "/api/fulfilment/v4/subscriptions"
	// maxSubscriptionBody is the largest request body accepted (413 above).
	maxSubscriptionBody = 64 << 10
)

// SubscriptionsHandler serves the gateway's own v4 endpoints: the partner's
// webhook subscriptions API at /api/fulfilment/v4/subscriptions and
// /api/fulfilment/v4/subscriptions/{id}, and the OpenAPI document at
// /api/fulfilment/v4/openapi.json; every other path goes to the next
// handler. It must run behind the fulfilment_auth Bearer guard, which names
// the partner; a request without a partner answers 401. Subscriptions are
// kept by the fulfilment app's webhook service.
//
//	POST   .../subscriptions       {"notificationUrl","event"} → 201 + Location (200 if it exists)
//	GET    .../subscriptions       → 200 {"subscriptions":[...]} (the caller's only)
//	GET    .../subscriptions/{id}  → 200 subscription, 404 if not the caller's
//	DELETE .../subscriptions/{id}  → 204, 404 if not the caller's
//	GET    .../openapi.json        → 200 the OpenAPI document (docs/openapi.yaml as JSON)
//
// A POST body not received within ReadTimeout answers 408.
type SubscriptionsHandler struct {
	// ReadTimeout bounds the wait for a request body, counted from the end
	// of the headers: 408 after it. Default 10s.
	ReadTimeout caddy.Duration `json:"read_timeout,omitempty"`

	app    *fulfilment.App
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (*SubscriptionsHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_subscriptions",
		New: func() caddy.Module { return new(SubscriptionsHandler) },
	}
}

// Provision finds the fulfilment app.
func (h *SubscriptionsHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := fulfilhttp.CheckReadTimeout(h.ReadTimeout); err != nil {
		return err
	}
	var err error
	h.app, err = fulfilhttp.LoadApp(ctx)
	return err
}

// subscriptionJSON is a subscription as partners see it.
type subscriptionJSON struct {
	ID              string `json:"id"`
	NotificationURL string `json:"notificationUrl"`
	Event           string `json:"event"`
	CreatedAt       string `json:"createdAt"` // RFC 3339, UTC
}

func toSubscriptionJSON(s webhooks.Subscription) subscriptionJSON {
	return subscriptionJSON{ID: s.ID, NotificationURL: s.NotificationURL, Event: s.Event,
		CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339)}
}

// Answers reports whether the handler answers a request for path:
// /api/fulfilment/v4/subscriptions, the paths below it, and the
// interface description /api/fulfilment/v4/openapi.json.
func (*SubscriptionsHandler) Answers(path string) bool {
	_, _, ours := match(path)
	return ours
}

// ServeHTTP answers the handler's routes (routes.go) and passes every
// other path to next.
func (h *SubscriptionsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	rt, id, ours := match(r.URL.Path)
	if !ours {
		return next.ServeHTTP(w, r)
	}
	partner, ok := fulfilhttp.PartnerFromRequest(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fulfilment"`)
		fulfilhttp.WriteProblem(w, http.StatusUnauthorized, "unauthorized", "a valid Bearer access token is required")
		return nil
	}
	if rt == nil {
		fulfilhttp.WriteProblem(w, http.StatusNotFound, "not-found", "no such subscription")
		return nil
	}
	serve := rt.action(r.Method)
	if serve == nil {
		w.Header().Set("Allow", rt.allow)
		fulfilhttp.WriteProblem(w, http.StatusMethodNotAllowed, "method-not-allowed",
			fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, rt.allow))
		return nil
	}
	serve(h, w, r, partner, id)
	return nil
}

// store returns the webhook service's subscriptions, or answers 503 and
// returns nil while the service is not running.
func (h *SubscriptionsHandler) store(w http.ResponseWriter) *webhooks.SubscriptionStore {
	svc := h.app.WebhookService()
	if svc == nil {
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the webhook service is not running")
		return nil
	}
	return svc.Subscriptions()
}

// serveDocument answers GET and HEAD of the OpenAPI document.
func (h *SubscriptionsHandler) serveDocument(w http.ResponseWriter, r *http.Request, _, _ string) {
	serveOpenAPI(w, r, h.logger)
}

// list answers GET and HEAD of the collection: the partner's subscriptions.
func (h *SubscriptionsHandler) list(w http.ResponseWriter, r *http.Request, partner, _ string) {
	store := h.store(w)
	if store == nil {
		return
	}
	subs, err := store.List(partner)
	if err != nil {
		h.internal(w, r, "listing subscriptions", err)
		return
	}
	out := make([]subscriptionJSON, 0, len(subs))
	for _, s := range subs {
		out = append(out, toSubscriptionJSON(s))
	}
	fulfilhttp.WriteJSON(w, http.StatusOK, "application/json", struct {
		Subscriptions []subscriptionJSON `json:"subscriptions"`
	}{out})
}

// get answers GET and HEAD of one of the partner's subscriptions.
func (h *SubscriptionsHandler) get(w http.ResponseWriter, r *http.Request, partner, id string) {
	store := h.store(w)
	if store == nil {
		return
	}
	sub, err := store.Get(partner, id)
	if err != nil {
		h.storeError(w, r, "reading a subscription", err)
		return
	}
	fulfilhttp.WriteJSON(w, http.StatusOK, "application/json", toSubscriptionJSON(sub))
}

// delete answers DELETE of one of the partner's subscriptions.
func (h *SubscriptionsHandler) delete(w http.ResponseWriter, r *http.Request, partner, id string) {
	store := h.store(w)
	if store == nil {
		return
	}
	if err := store.Delete(partner, id); err != nil {
		h.storeError(w, r, "deleting a subscription", err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// create answers POST of the collection: a new subscription of the
// partner's, or the same one if it exists.
func (h *SubscriptionsHandler) create(w http.ResponseWriter, r *http.Request, partner, _ string) {
	store := h.store(w)
	if store == nil {
		return
	}
	req, p := decodeSubscriptionRequest(w, r, time.Duration(h.ReadTimeout), h.logger)
	if p != nil {
		fulfilhttp.WriteProblemBody(w, *p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second) // bounds the DNS look-up of the host
	defer cancel()
	sub, created, err := store.Create(ctx, partner, req.url, req.event)
	if err != nil {
		h.storeError(w, r, "creating a subscription", err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", subscriptionsPath+"/"+sub.ID)
		if c := h.logger.Check(zapcore.InfoLevel, "subscription created"); c != nil {
			c.Write(zap.String("partner", partner), zap.String("subscription", sub.ID), zap.String("event", sub.Event), fulfilhttp.RequestIDField(r))
		}
	}
	fulfilhttp.WriteJSON(w, status, "application/json", toSubscriptionJSON(sub))
}

// storeError answers an error of the subscription store.
func (h *SubscriptionsHandler) storeError(w http.ResponseWriter, r *http.Request, what string, err error) {
	var ve *webhooks.ValidationError
	switch {
	case errors.As(err, &ve):
		p := fulfilhttp.NewProblem(http.StatusBadRequest, "invalid-request", ve.Error())
		p.Field = ve.Field
		fulfilhttp.WriteProblemBody(w, p)
	case errors.Is(err, webhooks.ErrNotFound):
		fulfilhttp.WriteProblem(w, http.StatusNotFound, "not-found", "no such subscription")
	case errors.Is(err, webhooks.ErrLimit):
		fulfilhttp.WriteProblem(w, http.StatusConflict, "subscription-limit",
			"the partner has reached its maximum number of subscriptions; delete one first")
	case errors.Is(err, webhooks.ErrUnavailable):
		h.logger.Warn(what, zap.Error(err), fulfilhttp.RequestIDField(r))
		w.Header().Set("Retry-After", "5")
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the gateway cannot reach its database; nothing was changed, try again shortly")
	case errors.Is(err, context.DeadlineExceeded):
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "timed out; try again")
	case errors.Is(err, context.Canceled):
		// the client went away; nobody reads the answer
	default:
		h.internal(w, r, what, err)
	}
}

func (h *SubscriptionsHandler) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	h.logger.Error(what, zap.Error(err), fulfilhttp.RequestIDField(r))
	fulfilhttp.WriteProblem(w, http.StatusInternalServerError, "internal", "internal error; it has been logged")
}

// subscriptionRequest is a validated-for-shape POST body.
type subscriptionRequest struct{ url, event string }

// decodeSubscriptionRequest checks the content type and size of a POST and
// decodes its JSON strictly. Values (URL form, event name, SSRF) are checked
// by the subscription store. A non-nil problem is the answer.
func decodeSubscriptionRequest(w http.ResponseWriter, r *http.Request, timeout time.Duration, logger *zap.Logger) (subscriptionRequest, *fulfilhttp.Problem) {
	invalid := func(field, detail string) *fulfilhttp.Problem {
		p := fulfilhttp.NewProblem(http.StatusBadRequest, "invalid-request", detail)
		p.Field = field
		return &p
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		w.Header().Set("Accept", "application/json")
		p := fulfilhttp.NewProblem(http.StatusUnsupportedMediaType, "unsupported-media-type", "the request body must be application/json")
		return subscriptionRequest{}, &p
	}
	body, err := fulfilhttp.ReadBody(w, r, maxSubscriptionBody, timeout, logger)
	if err != nil {
		p := fulfilhttp.BodyProblem(err, "the request body is larger than "+strconv.Itoa(maxSubscriptionBody)+" bytes")
		return subscriptionRequest{}, &p
	}

	// encoding/json would match field names case-insensitively and replace
	// invalid UTF-8 silently; the interface's fields are exact, and a URL
	// the partner never sent must not be stored.
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	err = dec.Decode(&fields)
	if err == nil {
		if _, e := dec.Token(); e != io.EOF {
			err = errors.New("data after the JSON object")
		}
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te), err == nil && fields == nil:
		return subscriptionRequest{}, invalid("", "the request body must be a JSON object")
	case err != nil:
		return subscriptionRequest{}, invalid("", "the request body is not valid JSON: "+err.Error())
	}
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if f != "notificationUrl" && f != "event" {
			return subscriptionRequest{}, invalid(f, fmt.Sprintf("%s: unknown field; the fields are notificationUrl and event", f))
		}
	}
	var out [2]string
	for i, f := range [2]string{"notificationUrl", "event"} {
		raw, ok := fields[f]
		if !ok || string(raw) == "null" {
			return subscriptionRequest{}, invalid(f, f+": required")
		}
		if !utf8.Valid(raw) { // RawMessage keeps the bytes sent
			return subscriptionRequest{}, invalid(f, f+": not valid UTF-8")
		}
		if json.Unmarshal(raw, &out[i]) != nil {
			return subscriptionRequest{}, invalid(f, f+": must be a string")
		}
	}
	return subscriptionRequest{url: out[0], event: out[1]}, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*SubscriptionsHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*SubscriptionsHandler)(nil)
	_ caddyfile.Unmarshaler       = (*SubscriptionsHandler)(nil)
)
