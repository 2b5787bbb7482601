package portal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// webhookRoutes: Webhooks (the signing key, subscriptions, test events,
// the delivery log, replay) and the event catalogue. Every id in a path
// or form names one of the session partner's subscriptions or deliveries:
// the webhook service's partner-scoped calls answer another partner's id
// exactly as an unknown one (404).
func (h *Handler) webhookRoutes() []route {
	return []route{
		{pattern: "GET /webhooks", handle: h.webhooks},
		{pattern: "POST /webhooks/key/reveal", handle: h.revealKey},
		{pattern: "GET /webhooks/key/rotate", handle: h.confirmRotateKey},
		{pattern: "POST /webhooks/key/rotate", handle: h.rotateKey},
		{pattern: "POST /webhooks/subscriptions", handle: h.createSubscription},
		{pattern: "GET /webhooks/subscriptions/{id}/delete", handle: h.confirmDeleteSubscription},
		{pattern: "POST /webhooks/subscriptions/{id}/delete", handle: h.deleteSubscription},
		{pattern: "POST /webhooks/subscriptions/{id}/test", handle: h.sendTest},
		{pattern: "GET /webhooks/deliveries", handle: h.deliveries},
		{pattern: "POST /webhooks/replay", handle: h.replaySince},
		{pattern: "GET /webhooks/subscriptions/{sub}/deliveries/{id}", handle: h.delivery},
		{pattern: "POST /webhooks/subscriptions/{sub}/deliveries/{id}/replay", handle: h.replayOne},
		{pattern: "GET /events", handle: h.events},
	}
}

func init() {
	funcs["ms"] = func(d time.Duration) string {
		if d < 10*time.Millisecond {
			return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
		}
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	funcs["shownValue"] = func(id, value string) shown { return shown{ID: id, Value: value} }
	for k, v := range map[string]string{
		"subscribed":     "The subscription was created.",
		"unsubscribed":   "The subscription was deleted. Deliveries still queued for it are dropped.",
		"test_sent":      "A test event was queued. It appears below; reload to follow its attempts.",
		"replayed":       "The delivery was queued again, with the same x-hook-id and a fresh retry period.",
		"replayed_all":   "The dead deliveries were queued again. They appear below as queued, then delivered or retrying.",
		"replayed_none":  "There were no dead deliveries to replay in that period.",
		"already_exists": "You already had that subscription; nothing changed.",
	} {
		notices[k] = v
	}
}

// webhookService is the running webhook service, or the page saying it is
// not.
func webhookService(pc *pageContext) (*webhooks.Service, error) {
	if pc.Webhooks == nil {
		return nil, errStatus(http.StatusServiceUnavailable, "Webhooks are not running right now; try again in a moment.")
	}
	return pc.Webhooks, nil
}

type webhooksData struct {
	Subscriptions []webhooks.Subscription
	Events        []string
	Max           int
	AtLimit       bool
	// Form is what a refused create sent, shown again with Error.
	Form struct{ URL, Event string }
	// Error is why a create was refused; Field the form field it concerns.
	Error, Field string
}

func (h *Handler) webhooksPage(w http.ResponseWriter, pc *pageContext, status int, d webhooksData) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	if d.Subscriptions, err = svc.Subscriptions().List(pc.Partner.ID); err != nil {
		return err
	}
	d.Events, d.Max = webhooks.EventNames, svc.Settings().MaxSubscriptionsPerPartner
	d.AtLimit = len(d.Subscriptions) >= d.Max
	return pc.render(w, status, "webhooks", d)
}

func (h *Handler) webhooks(w http.ResponseWriter, _ *http.Request, pc *pageContext) error {
	return h.webhooksPage(w, pc, http.StatusOK, webhooksData{})
}

// keyData is the page that shows the webhook key (on request, or after a
// rotation).
type keyData struct {
	Rotated bool
	Key     shown
}

// revealKey shows the partner's webhook key: a POST, so the key is never
// in a URL, a history entry or a prefetched page.
func (h *Handler) revealKey(w http.ResponseWriter, _ *http.Request, pc *pageContext) error {
	if err := pc.audit("reveal_webhook_key", "", "ok", ""); err != nil {
		return err
	}
	return pc.render(w, http.StatusOK, "webhook_key", keyData{Key: shown{ID: "webhook-key", Value: string(pc.Partner.WebhookKey)}})
}

func (h *Handler) confirmRotateKey(w http.ResponseWriter, _ *http.Request, pc *pageContext) error {
	return pc.render(w, http.StatusOK, "webhook_key_confirm", nil)
}

func (h *Handler) rotateKey(w http.ResponseWriter, _ *http.Request, pc *pageContext) error {
	key, err := pc.Tokens.RotateWebhookKey(pc.Partner.ID)
	if err != nil {
		return pc.refused("rotate_webhook_key", "", outcomeOf(err), "", keyError(err))
	}
	if err := pc.audit("rotate_webhook_key", "", "ok", "new key signs every attempt from now, retries included"); err != nil {
		return err
	}
	return pc.render(w, http.StatusOK, "webhook_key", keyData{Rotated: true, Key: shown{ID: "webhook-key", Value: key}})
}

func keyError(err error) error {
	if errors.Is(err, tokens.ErrStatic) {
		return errStatus(http.StatusConflict, "Your webhook key is set by your warehouse and cannot be rotated here. Ask them to change it.")
	}
	return clientError(err)
}

func (h *Handler) createSubscription(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	url, event := strings.TrimSpace(r.PostForm.Get("notification_url")), r.PostForm.Get("event")
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second) // bounds the look-up of the host
	defer cancel()
	sub, created, err := svc.Subscriptions().Create(ctx, pc.Partner.ID, url, event)
	var ve *webhooks.ValidationError
	switch {
	case errors.As(err, &ve):
		if aerr := pc.audit("create_subscription", "", "refused", ve.Field+": "+ve.Reason); aerr != nil {
			return aerr
		}
		d := webhooksData{Error: ve.Reason, Field: ve.Field}
		d.Form.URL, d.Form.Event = url, event
		return h.webhooksPage(w, pc, http.StatusBadRequest, d)
	case errors.Is(err, webhooks.ErrLimit):
		return pc.refused("create_subscription", "", "limit", "",
			errStatus(http.StatusConflict, "You have reached the most subscriptions allowed. Delete one you no longer use first."))
	case errors.Is(err, context.DeadlineExceeded):
		return errStatus(http.StatusServiceUnavailable, "Checking the notification URL's host took too long; try again.")
	case err != nil:
		return err
	}
	outcome, done := "ok", "subscribed"
	if !created {
		outcome, done = "exists", "already_exists"
	}
	if err := pc.audit("create_subscription", sub.ID, outcome, sub.Event); err != nil {
		return err
	}
	return pc.redirect(w, "/webhooks?done="+done)
}

// ownSubscription returns the session partner's subscription id.
func ownSubscription(pc *pageContext, id string) (*webhooks.Service, webhooks.Subscription, error) {
	svc, err := webhookService(pc)
	if err != nil {
		return nil, webhooks.Subscription{}, err
	}
	sub, err := svc.Subscriptions().Get(pc.Partner.ID, id)
	if err != nil {
		return nil, webhooks.Subscription{}, webhookError(err)
	}
	return svc, sub, nil
}

func (h *Handler) confirmDeleteSubscription(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	_, sub, err := ownSubscription(pc, r.PathValue("id"))
	if err != nil {
		return err
	}
	return pc.render(w, http.StatusOK, "subscription_confirm", sub)
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := svc.Subscriptions().Delete(pc.Partner.ID, id); err != nil {
		return pc.refused("delete_subscription", id, webhookOutcome(err), "", webhookError(err))
	}
	if err := pc.audit("delete_subscription", id, "ok", ""); err != nil {
		return err
	}
	return pc.redirect(w, "/webhooks?done=unsubscribed")
}

func (h *Handler) sendTest(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	sub := r.PathValue("id")
	id, err := svc.SendTestFor(pc.Partner.ID, sub)
	if err != nil {
		return pc.refused("send_test_event", sub, webhookOutcome(err), "", webhookError(err))
	}
	if err := pc.audit("send_test_event", sub, "ok", "delivery "+id); err != nil {
		return err
	}
	return pc.redirect(w, "/webhooks/deliveries?subscription="+sub+"&done=test_sent")
}

// webhookOutcome names a refused webhook action's outcome in the audit log.
func webhookOutcome(err error) string {
	if errors.Is(err, webhooks.ErrNotFound) {
		return "not_found"
	}
	return "error"
}

// webhookError is the page for a refused webhook action: another
// partner's subscription or delivery is "not found", as an unknown one.
func webhookError(err error) error {
	if errors.Is(err, webhooks.ErrNotFound) {
		return errStatus(http.StatusNotFound, "There is no such subscription or delivery.")
	}
	return err
}
