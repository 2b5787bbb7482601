package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deliveriesData is the delivery log page.
type deliveriesData struct {
	Filter        webhooks.LogFilter
	Subscriptions []webhooks.Subscription
	Events        []string
	States        []string
	Rows          []deliveryRow
	Partial       bool
	Limit         int
	Since         string // the replay form's default: a day ago, UTC
}

// deliveryRow is one delivery as the log and its own page show it.
type deliveryRow struct {
	webhooks.DeliveryInfo
	Last    *webhooks.AttemptRecord // the latest attempt, if any
	Body    string                  // the payload sent
	Subject string                  // the subscription's notification URL
}

func newDeliveryRow(in webhooks.DeliveryInfo) deliveryRow {
	r := deliveryRow{DeliveryInfo: in, Body: string(webhooks.Event{Name: in.Event, Identifier: in.Identifier}.Payload().Body())}
	if n := len(in.Log); n > 0 {
		r.Last = &in.Log[n-1]
	}
	return r
}

// logStates are the states the filter offers, in the order a delivery
// goes through them.
var logStates = []string{webhooks.StateQueued, webhooks.StateRetrying, webhooks.StateDelivered, webhooks.StateDead}

// logLimit is how many deliveries the log page shows.
const logLimit = 100

func (h *Handler) deliveries(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := webhooks.LogFilter{SubscriptionID: q.Get("subscription"), State: q.Get("state"), Event: q.Get("event"), Limit: logLimit}
	if f.State != "" && !webhooks.ValidState(f.State) {
		return errStatus(http.StatusBadRequest, "Unknown state: choose queued, retrying, delivered or dead.")
	}
	if f.Event != "" && !webhooks.ValidEvent(f.Event) {
		return errStatus(http.StatusBadRequest, "Unknown event: choose one of the seven event names.")
	}
	page, err := svc.DeliveryLog(pc.Partner.ID, f)
	if err != nil {
		return webhookError(err)
	}
	subs, err := svc.Subscriptions().List(pc.Partner.ID)
	if err != nil {
		return err
	}
	d := deliveriesData{Filter: f, Subscriptions: subs, Events: webhooks.EventNames, States: logStates,
		Partial: page.Partial, Limit: logLimit, Since: svc.Settings().Clock().UTC().Add(-24 * time.Hour).Format(sinceLayout)}
	for _, in := range page.Deliveries {
		d.Rows = append(d.Rows, newDeliveryRow(in))
	}
	return pc.render(w, http.StatusOK, "deliveries", d)
}

func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	in, err := svc.Delivery(pc.Partner.ID, r.PathValue("sub"), r.PathValue("id"))
	if err != nil {
		return webhookError(err)
	}
	return pc.render(w, http.StatusOK, "delivery", newDeliveryRow(in))
}

func (h *Handler) replayOne(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	sub, id := r.PathValue("sub"), r.PathValue("id")
	if _, err = svc.Delivery(pc.Partner.ID, sub, id); err == nil {
		err = svc.ReplayFor(pc.Partner.ID, id)
	}
	if err != nil {
		if aerr := pc.audit("replay_delivery", id, webhookOutcome(err), ""); aerr != nil {
			return aerr
		}
		if webhookOutcome(err) == "not_found" {
			return errStatus(http.StatusNotFound, "There is no such dead delivery: only a dead delivery can be replayed, and it may have been replayed already.")
		}
		return err
	}
	if err := pc.audit("replay_delivery", id, "ok", ""); err != nil {
		return err
	}
	return pc.redirect(w, "/webhooks/subscriptions/"+url.PathEscape(sub)+"/deliveries/"+url.PathEscape(id)+"?done=replayed")
}

// sinceLayout is the form of a datetime-local input.
const sinceLayout = "2006-01-02T15:04"

// parseSince reads the replay form's time: a datetime-local value (taken
// as UTC, as the form says) or RFC 3339.
func parseSince(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{sinceLayout, "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time")
}

func (h *Handler) replaySince(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	svc, err := webhookService(pc)
	if err != nil {
		return err
	}
	sub := r.PostForm.Get("subscription")
	since, err := parseSince(r.PostForm.Get("since"))
	if err != nil {
		return errStatus(http.StatusBadRequest, "Give the time to replay from as YYYY-MM-DDTHH:MM (UTC).")
	}
	n, err := svc.ReplayDeadSince(pc.Partner.ID, sub, since)
	target := sub
	if target == "" {
		target = "all subscriptions"
	}
	if err != nil {
		return pc.refused("replay_dead_since", target, webhookOutcome(err), since.Format(time.RFC3339), webhookError(err))
	}
	if err := pc.audit("replay_dead_since", target, "ok", fmt.Sprintf("%d replayed, dead since %s", n, since.Format(time.RFC3339))); err != nil {
		return err
	}
	done := "replayed_all"
	if n == 0 {
		done = "replayed_none"
	}
	q := url.Values{"done": {done}}
	if sub != "" {
		q.Set("subscription", sub)
	}
	return pc.redirect(w, "/webhooks/deliveries?"+q.Encode())
}
