package adminapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func init() {
	caddy.RegisterModule(adminWebhooks{})
}

// adminWebhooksBase is the admin API route of webhook operations.
const adminWebhooksBase = "/fulfilment/webhooks/"

// adminWebhooks is the admin API of webhook delivery, for operators:
//
//	POST /fulfilment/webhooks/test    {"subscription":"<id>"}      → 202 {"delivery":"<id>"}
//	GET  /fulfilment/webhooks/queued  [?subscription=&partner=&limit=] → 200 {"deliveries":[...]}
//	GET  /fulfilment/webhooks/dead    [?subscription=&partner=&since=&limit=] → 200 {"deliveries":[...]}
//	POST /fulfilment/webhooks/replay  {"delivery":"<id>"}          → 200 {"replayed":1}
//	POST /fulfilment/webhooks/replay  {"subscription":"<id>","since":"<RFC 3339>"} → 200 {"replayed":N}
//	GET  /fulfilment/webhooks/depth                                → 200 {"queued":N,"dead":M}
//	GET  /fulfilment/webhooks                                      → 200 {"queued":N,"dead":M,"operations":{...}}
//
// A test event is a real delivery of the subscription's event with the
// identifier "test", signed and retried like any other. Unknown ids answer
// 404, bad input 400, and 503 when no fulfilment app runs.
type adminWebhooks struct{}

// CaddyModule returns the Caddy module information.
func (adminWebhooks) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.fulfilment_webhooks",
		New: func() caddy.Module { return new(adminWebhooks) },
	}
}

// Routes returns the admin routes.
func (adminWebhooks) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveAdminWebhooks)
	return []caddy.AdminRoute{{Pattern: adminWebhooksBase, Handler: h}, {Pattern: strings.TrimSuffix(adminWebhooksBase, "/"), Handler: h}}
}

func serveAdminWebhooks(w http.ResponseWriter, r *http.Request) error {
	op := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(adminWebhooksBase, "/")), "/")
	switch op {
	case "": // the index: the operations, with the depth
	case "test", "queued", "dead", "replay", "depth":
	default:
		return apiErrorf(http.StatusNotFound, "unknown webhooks operation %q; use test, queued, dead, replay or depth", op)
	}
	method := http.MethodGet
	if op == "test" || op == "replay" {
		method = http.MethodPost
	}
	if err := requireMethod(w, r, method); err != nil {
		return err
	}
	app, err := runningApp()
	if err != nil {
		return err
	}
	svc := app.WebhookService()
	if svc == nil {
		return apiErrorf(http.StatusServiceUnavailable, "the webhook service is not running")
	}
	switch op {
	case "test":
		return adminSendTest(w, r, svc)
	case "queued", "dead":
		return adminListDeliveries(w, r, svc, op == "dead")
	case "replay":
		return adminReplay(w, r, svc)
	}
	// The depth as the store counts it now: with several instances on one
	// database, whichever instance is asked answers alike.
	q, d, err := svc.CurrentDepth()
	if err != nil {
		return whAdminOpError(err, "queue depth")
	}
	switch op {
	case "depth":
		return writeAdminJSON(w, http.StatusOK, map[string]int64{"queued": q, "dead": d})
	default: // the index
		return writeAdminJSON(w, http.StatusOK, map[string]any{"queued": q, "dead": d, "operations": map[string]string{
			"test": "POST", "queued": "GET", "dead": "GET", "replay": "POST", "depth": "GET"}})
	}
}

func adminSendTest(w http.ResponseWriter, r *http.Request, svc *webhooks.Service) error {
	var in struct {
		Subscription string `json:"subscription"`
	}
	if err := decodeAdminJSON(r, &in); err != nil {
		return err
	}
	if in.Subscription == "" {
		return apiErrorf(http.StatusBadRequest, "subscription: required")
	}
	id, err := svc.SendTest(in.Subscription)
	if err != nil {
		return whAdminOpError(err, "subscription "+in.Subscription)
	}
	return writeAdminJSON(w, http.StatusAccepted, map[string]string{"delivery": id})
}

func adminListDeliveries(w http.ResponseWriter, r *http.Request, svc *webhooks.Service, dead bool) error {
	q := r.URL.Query()
	f := webhooks.ListFilter{SubscriptionID: q.Get("subscription"), PartnerID: q.Get("partner")}
	for k := range q {
		if k == "since" && dead {
			continue
		}
		if k != "subscription" && k != "partner" && k != "limit" {
			return apiErrorf(http.StatusBadRequest, "unknown parameter %q; use subscription, partner, limit (and since for dead deliveries)", k)
		}
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return apiErrorf(http.StatusBadRequest, "since must be an RFC 3339 time, got %q", s)
		}
		f.DiedSince = t
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			return apiErrorf(http.StatusBadRequest, "limit must be an integer from 1 to 10000, got %q", s)
		}
		f.Limit = n
	}
	list := svc.Queued
	if dead {
		list = svc.Dead
	}
	ds, err := list(f)
	if err != nil {
		return whAdminOpError(err, "deliveries")
	}
	if ds == nil {
		ds = []webhooks.DeliveryInfo{}
	}
	return writeAdminJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

func adminReplay(w http.ResponseWriter, r *http.Request, svc *webhooks.Service) error {
	var in struct {
		Delivery     string `json:"delivery"`
		Subscription string `json:"subscription"`
		Since        string `json:"since"`
	}
	if err := decodeAdminJSON(r, &in); err != nil {
		return err
	}
	switch {
	case in.Delivery != "" && (in.Subscription != "" || in.Since != ""):
		return apiErrorf(http.StatusBadRequest, "give either delivery, or subscription and since")
	case in.Delivery != "":
		if err := svc.Replay(in.Delivery); err != nil {
			return whAdminOpError(err, "dead delivery "+in.Delivery)
		}
		return writeAdminJSON(w, http.StatusOK, map[string]int{"replayed": 1})
	case in.Subscription == "":
		return apiErrorf(http.StatusBadRequest, "give either delivery, or subscription and since")
	}
	since := time.Time{}
	if in.Since != "" {
		t, err := time.Parse(time.RFC3339, in.Since)
		if err != nil {
			return apiErrorf(http.StatusBadRequest, "since must be an RFC 3339 time, got %q", in.Since)
		}
		since = t
	}
	n, err := svc.ReplaySubscription(in.Subscription, since)
	if err != nil {
		return whAdminOpError(err, "subscription "+in.Subscription)
	}
	return writeAdminJSON(w, http.StatusOK, map[string]int{"replayed": n})
}

// whAdminOpError maps a webhook operation's error to an API error.
func whAdminOpError(err error, what string) error {
	var ve *webhooks.ValidationError
	switch {
	case errors.Is(err, webhooks.ErrNotFound):
		return apiErrorf(http.StatusNotFound, "%s not found", what)
	case errors.As(err, &ve):
		return apiError(http.StatusBadRequest, ve)
	default:
		return apiErrorf(http.StatusInternalServerError, "%s: %w", what, err)
	}
}

// Interface guards
var _ caddy.AdminRouter = adminWebhooks{}
