package portal

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// integrationRoutes: Settings → Integrations, the partner's OAuth clients.
// Every action names the client in the path and works only on a client of
// the session's partner (another partner's id answers 404, as an unknown
// one does); clients of the configuration are read-only.
func (h *Handler) integrationRoutes() []route {
	return []route{
		{pattern: "GET /settings/integrations", handle: h.integrations},
		{pattern: "POST /settings/integrations/clients", handle: h.createClient},
		{pattern: "GET /settings/integrations/clients/{id}/rotate", handle: h.confirmClient("rotate")},
		{pattern: "POST /settings/integrations/clients/{id}/rotate", handle: h.rotateClient},
		{pattern: "GET /settings/integrations/clients/{id}/revoke", handle: h.confirmClient("revoke")},
		{pattern: "POST /settings/integrations/clients/{id}/revoke", handle: h.revokeClient},
	}
}

type integrationsData struct {
	Clients    []tokens.PartnerClient
	MaxClients int
	AtLimit    bool
	TokenURL   string
	Grace      string
}

func (h *Handler) integrations(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	cs := pc.Tokens.PartnerClients(pc.Partner.ID)
	return pc.render(w, http.StatusOK, "integrations", integrationsData{Clients: cs, MaxClients: h.MaxClients,
		AtLimit: len(cs) >= h.MaxClients, TokenURL: h.tokenURL(r), Grace: humanDuration(h.grace)})
}

// shown is a value shown once on a page, with the id of its element (the
// copy button names it).
type shown struct {
	ID    string
	Value string
}

// newSecretData is the page that shows a new secret, once.
type newSecretData struct {
	Rotated  bool
	ClientID string
	Secret   shown
	Curl     shown
	Grace    string
	Until    time.Time
}

func (h *Handler) secretPage(w http.ResponseWriter, r *http.Request, pc *pageContext, creds tokens.Credentials, rotated bool) error {
	d := newSecretData{Rotated: rotated, ClientID: creds.ClientID, Secret: shown{ID: "client-secret", Value: creds.ClientSecret},
		Curl: shown{ID: "curl", Value: fmt.Sprintf("curl -s -u '%s:%s' -d grant_type=client_credentials %s",
			creds.ClientID, creds.ClientSecret, h.tokenURL(r))}}
	if rotated {
		d.Grace = humanDuration(h.grace)
		for _, c := range pc.Tokens.PartnerClients(pc.Partner.ID) {
			if c.ID == creds.ClientID {
				d.Until = c.PreviousUntil
			}
		}
	}
	return pc.render(w, http.StatusOK, "client_secret", d)
}

func (h *Handler) createClient(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	creds, err := pc.Tokens.CreateClient(pc.Partner.ID, h.MaxClients)
	if errors.Is(err, tokens.ErrLimit) {
		return pc.refused("create_client", "", "limit", fmt.Sprintf("at most %d clients", h.MaxClients),
			errStatus(http.StatusConflict, fmt.Sprintf("You already have %d clients, the most allowed. Revoke one you no longer use first.", h.MaxClients)))
	}
	if err != nil {
		return clientError(err)
	}
	if err := pc.audit("create_client", creds.ClientID, "ok", ""); err != nil {
		return err
	}
	return h.secretPage(w, r, pc, creds, false)
}

type confirmData struct {
	Action   string
	ClientID string
	Grace    string
}

// confirmClient is the confirmation page of rotate or revoke: the action
// itself is the form's POST, so it works without script.
func (h *Handler) confirmClient(action string) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
		id := r.PathValue("id")
		if err := h.ownClient(pc, id); err != nil {
			return err
		}
		return pc.render(w, http.StatusOK, "client_confirm", confirmData{Action: action, ClientID: id, Grace: humanDuration(h.grace)})
	}
}

// ownClient checks that id is a client of the session's partner that the
// portal may change.
func (h *Handler) ownClient(pc *pageContext, id string) error {
	for _, c := range pc.Tokens.PartnerClients(pc.Partner.ID) {
		if c.ID == id {
			if c.Static {
				return clientError(tokens.ErrStatic)
			}
			return nil
		}
	}
	return clientError(tokens.ErrNotFound)
}

func (h *Handler) rotateClient(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	id := r.PathValue("id")
	creds, err := pc.Tokens.RotateClientSecret(pc.Partner.ID, id, h.grace)
	if err != nil {
		return pc.refused("rotate_client", id, outcomeOf(err), "", clientError(err))
	}
	if err := pc.audit("rotate_client", id, "ok", "previous secret works for "+humanDuration(h.grace)); err != nil {
		return err
	}
	return h.secretPage(w, r, pc, creds, true)
}

func (h *Handler) revokeClient(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	id := r.PathValue("id")
	if err := pc.Tokens.RevokeClient(pc.Partner.ID, id); err != nil {
		return pc.refused("revoke_client", id, outcomeOf(err), "", clientError(err))
	}
	if err := pc.audit("revoke_client", id, "ok", ""); err != nil {
		return err
	}
	return pc.redirect(w, "/settings/integrations?done=revoked")
}

// outcomeOf names a refused action's outcome in the audit log.
func outcomeOf(err error) string {
	switch {
	case errors.Is(err, tokens.ErrNotFound):
		return "not_found"
	case errors.Is(err, tokens.ErrStatic):
		return "read_only"
	case errors.Is(err, tokens.ErrInvalid):
		return "refused"
	}
	return "error"
}

// clientError is the page for a refused client action. Another partner's
// client is "not found", exactly as an unknown one.
func clientError(err error) error {
	switch {
	case errors.Is(err, tokens.ErrNotFound):
		return errStatus(http.StatusNotFound, "There is no such client.")
	case errors.Is(err, tokens.ErrStatic):
		return errStatus(http.StatusConflict, "This client is managed by your warehouse and cannot be changed here.")
	case errors.Is(err, tokens.ErrInvalid):
		return errStatus(http.StatusForbidden, "Your account is disabled. Contact your warehouse.")
	}
	return err
}

// humanDuration writes d for people: "24 hours", "90 minutes", "5 seconds".
func humanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	}
	return plural(int64(d.Round(time.Second)/time.Second), "second")
}
