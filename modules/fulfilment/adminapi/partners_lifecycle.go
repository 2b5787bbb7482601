package adminapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// A partner created through the admin API can be disabled and deleted:
//
//   - disabled: its clients get no token and the tokens they hold are
//     refused at once (401); its subscriptions stay, and events keep being
//     delivered to them (the partner is shut out of the API, not of its
//     notifications). Enabling it again restores access.
//   - deleted: the partner and its clients are forgotten (their tokens are
//     refused at once), and its subscriptions are deleted, so its queued
//     deliveries are dropped when the dispatcher meets them (counted as
//     "dropped") and its dead letters expire with the retention. Changes of
//     the partner that the feed reads afterwards are rejected as of an
//     unknown partner.
//
// A partner defined in the configuration is disabled or removed there.

func adminSetPartnerActive(w http.ResponseWriter, svc *tokens.Service, id string, active bool) error {
	if err := svc.SetPartnerActive(id, active); err != nil {
		return tokensAdminErr(err)
	}
	if !active {
		if err := endPortalSessions(id); err != nil {
			return apiError(http.StatusInternalServerError,
				fmt.Errorf("partner %s disabled, but ending its portal sessions failed (disable it again): %w", id, err))
		}
	}
	return writeAdminJSON(w, http.StatusOK, map[string]any{"partner": id, "disabled": !active})
}

func adminDeletePartner(w http.ResponseWriter, svc *tokens.Service, id string) error {
	err := svc.DeletePartner(id)
	if err != nil && !errors.Is(err, tokens.ErrNotFound) {
		return tokensAdminErr(err)
	}
	// The partner is gone (or was deleted before while deleting its
	// subscriptions failed): delete what is left of its subscriptions, and
	// end its portal sessions (a partner created again under this id must
	// not find them).
	if perr := endPortalSessions(id); perr != nil {
		return apiError(http.StatusInternalServerError,
			fmt.Errorf("partner %s deleted, but ending its portal sessions failed (run the delete again): %w", id, perr))
	}
	n, subErr := deletePartnerSubscriptions(id)
	switch {
	case subErr != nil:
		return apiError(http.StatusInternalServerError,
			fmt.Errorf("partner %s deleted, but deleting its subscriptions failed (run the delete again): %w", id, subErr))
	case err != nil && n == 0:
		return tokensAdminErr(err)
	}
	return writeAdminJSON(w, http.StatusOK, map[string]any{"partner": id, "deleted": true, "subscriptions_deleted": n})
}

// deletePartnerSubscriptions deletes every subscription of partner id.
func deletePartnerSubscriptions(id string) (int, error) {
	app, err := runningApp()
	if err != nil {
		return 0, err
	}
	wh := app.WebhookService()
	if wh == nil {
		return 0, errors.New("the webhook service is not running")
	}
	subs, err := wh.Subscriptions().List(id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sub := range subs {
		if err := wh.Subscriptions().Delete(id, sub.ID); err != nil {
			return n, fmt.Errorf("subscription %s: %w", sub.ID, err)
		}
		n++
	}
	return n, nil
}

// endPortalSessions ends the portal sessions and unused sign-in links of
// partner id, and notes it in the audit log when there were any.
func endPortalSessions(id string) error {
	app, err := runningApp()
	if err != nil {
		return err
	}
	svc := app.PortalService()
	if svc == nil {
		return errors.New("the portal is not running")
	}
	n, err := svc.EndPartner(id)
	if err != nil || n == 0 {
		return err
	}
	return svc.Record(portal.AuditRecord{Partner: id, Actor: portal.ActorOperator, Action: "end_sessions",
		Detail: fmt.Sprintf("%d sessions ended: partner disabled or deleted", n)})
}
