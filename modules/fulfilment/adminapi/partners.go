package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	caddy.RegisterModule(adminPartners{})
}

// Admin API routes of partners and signing keys.
const (
	adminPartnersBase = "/fulfilment/partners"
	adminKeysBase     = "/fulfilment/keys"
)

// adminPartners is the admin API of partners, clients and signing keys
// (module admin.api.fulfilment_partners). Changes apply at once, without a
// restart, and are kept in the data dir. Secrets and keys appear only in the
// answer that creates or rotates them; listings never show them.
//
//	GET  /fulfilment/partners                                    → 200 [partner...]
//	POST /fulfilment/partners {"id","consolidation"}             → 201 {"partner","client_id","client_secret","webhook_key"}
//	GET  /fulfilment/partners/{id}                               → 200 partner
//	POST /fulfilment/partners/{id}/clients                       → 201 {"client_id","client_secret"}
//	POST /fulfilment/partners/{id}/clients/{client}/rotate       → 200 {"client_id","client_secret"}
//	POST /fulfilment/partners/{id}/clients/{client}/disable      → 200 {"client_id","active":false}
//	POST /fulfilment/partners/{id}/clients/{client}/enable       → 200 {"client_id","active":true}
//	POST /fulfilment/partners/{id}/webhook-key/rotate            → 200 {"partner","webhook_key"}
//	POST /fulfilment/partners/{id}/disable                       → 200 {"partner","disabled":true}
//	POST /fulfilment/partners/{id}/enable                        → 200 {"partner","disabled":false}
//	DELETE /fulfilment/partners/{id}                             → 200 {"partner","deleted":true,"subscriptions_deleted":N}
//	GET  /fulfilment/keys                                        → 200 [key...]
//	POST /fulfilment/keys/rotate                                 → 200 key
//
// The webhook key of a static partner rotates too, unless the Caddyfile sets
// its webhook_key (which always wins: 409, change it there). Adding a client
// works for any enabled partner, also a static one, within the portal's
// per-partner client limit (see adminAddClient). The clients routes change
// any client created at run time (with add-client or in the portal), also
// one of a static partner; a client defined in the Caddyfile is 409 (change
// it there).
//
// Errors: 400 bad input, 404 unknown partner or client, 409 an existing id,
// a partner, client or key that comes from the configuration (change it
// there), or a client added to a disabled partner or one at its client
// limit, 405 another method, 503 when the fulfilment app is not running.
type adminPartners struct{}

// CaddyModule returns the Caddy module information.
func (adminPartners) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.fulfilment_partners",
		New: func() caddy.Module { return new(adminPartners) },
	}
}

// Routes returns the admin routes.
func (adminPartners) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveAdminPartners)
	k := caddy.AdminHandlerFunc(serveAdminKeys)
	return []caddy.AdminRoute{
		{Pattern: adminPartnersBase, Handler: h},
		{Pattern: adminPartnersBase + "/", Handler: h},
		{Pattern: adminKeysBase, Handler: k},
		{Pattern: adminKeysBase + "/", Handler: k},
	}
}

// tokensAdminErr maps a tokens error onto its status.
func tokensAdminErr(err error) error {
	switch {
	case errors.Is(err, tokens.ErrNotFound):
		return apiError(http.StatusNotFound, err)
	case errors.Is(err, tokens.ErrExists), errors.Is(err, tokens.ErrStatic):
		return apiError(http.StatusConflict, err)
	case errors.Is(err, tokens.ErrInvalid):
		return apiError(http.StatusBadRequest, err)
	}
	return apiError(http.StatusInternalServerError, err)
}

// clientAdminErr maps an error of changing a client onto its status; a
// client of the configuration is 409 with what to do instead.
func clientAdminErr(err error, partner, client string) error {
	if errors.Is(err, tokens.ErrStatic) {
		return apiErrorf(http.StatusConflict,
			"client %s of partner %s is defined in the Caddyfile (the configuration): change or remove it there and reload; "+
				"only clients created with add-client or in the partner portal are changed here", client, partner)
	}
	return tokensAdminErr(err)
}

// adminAddClient adds a client to partner id with the portal's own call and
// limit: any enabled partner, static or not, with fewer clients than the
// limit (those of the configuration included). A disabled partner or one at
// the limit is 409, an unknown one 404.
func adminAddClient(w http.ResponseWriter, svc *tokens.Service, id string) error {
	app, err := runningApp()
	if err != nil {
		return err
	}
	limit := app.ClientLimit()
	creds, err := svc.CreateClient(id, limit)
	switch {
	case errors.Is(err, tokens.ErrLimit):
		return apiErrorf(http.StatusConflict,
			"partner %s already has %d clients (disabled ones and those of the Caddyfile included), the most allowed: "+
				"have the partner revoke one in the portal, or raise max_clients of fulfilment_portal (default %d)",
			id, limit, tokens.DefaultClientLimit)
	case errors.Is(err, tokens.ErrDisabled):
		return apiErrorf(http.StatusConflict, "partner %s is disabled: enable it first", id)
	case err != nil:
		return tokensAdminErr(err)
	}
	return writeAdminJSON(w, http.StatusCreated, creds)
}

func adminTokenService() (*tokens.Service, error) {
	app, err := runningApp()
	if err != nil {
		return nil, err
	}
	svc := app.TokenService()
	if svc == nil {
		return nil, apiError(http.StatusServiceUnavailable, errors.New("the token service is not running"))
	}
	return svc, nil
}

type createPartnerRequest struct {
	ID            string `json:"id"`
	Consolidation bool   `json:"consolidation"`
}

func serveAdminPartners(w http.ResponseWriter, r *http.Request) error {
	svc, err := adminTokenService()
	if err != nil {
		return err
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, adminPartnersBase), "/")
	var seg []string
	if rest != "" {
		seg = strings.Split(rest, "/")
	}
	switch {
	case len(seg) == 0 && r.Method == http.MethodGet:
		return writeAdminJSON(w, http.StatusOK, svc.Partners())
	case len(seg) == 0:
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		var req createPartnerRequest
		if err := decodeAdminJSON(r, &req); err != nil {
			return err
		}
		np, err := svc.CreatePartner(req.ID, req.Consolidation)
		if err != nil {
			return tokensAdminErr(err)
		}
		return writeAdminJSON(w, http.StatusCreated, np)
	case len(seg) == 1 && r.Method == http.MethodDelete:
		return adminDeletePartner(w, svc, seg[0])
	case len(seg) == 2 && (seg[1] == "disable" || seg[1] == "enable"):
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		return adminSetPartnerActive(w, svc, seg[0], seg[1] == "enable")
	case len(seg) == 1:
		if err := requireMethod(w, r, http.MethodGet); err != nil {
			return err
		}
		p, err := svc.PartnerInfo(seg[0])
		if err != nil {
			return tokensAdminErr(err)
		}
		return writeAdminJSON(w, http.StatusOK, p)
	case len(seg) == 2 && seg[1] == "clients":
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		return adminAddClient(w, svc, seg[0])
	case len(seg) == 3 && seg[1] == "webhook-key" && seg[2] == "rotate":
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		wk, err := svc.RotateWebhookKey(seg[0])
		if err != nil {
			return tokensAdminErr(err)
		}
		return writeAdminJSON(w, http.StatusOK, map[string]string{"partner": seg[0], "webhook_key": wk})
	case len(seg) == 4 && seg[1] == "clients":
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		partner, client := seg[0], seg[2]
		switch seg[3] {
		case "rotate":
			creds, err := svc.RotateSecret(partner, client)
			if err != nil {
				return clientAdminErr(err, partner, client)
			}
			return writeAdminJSON(w, http.StatusOK, creds)
		case "disable", "enable":
			active := seg[3] == "enable"
			if err := svc.SetClientActive(partner, client, active); err != nil {
				return clientAdminErr(err, partner, client)
			}
			return writeAdminJSON(w, http.StatusOK, map[string]any{"client_id": client, "active": active})
		}
	}
	return apiError(http.StatusNotFound, fmt.Errorf("no such partners route: %s %s", r.Method, r.URL.Path))
}

func serveAdminKeys(w http.ResponseWriter, r *http.Request) error {
	svc, err := adminTokenService()
	if err != nil {
		return err
	}
	switch strings.Trim(strings.TrimPrefix(r.URL.Path, adminKeysBase), "/") {
	case "":
		if err := requireMethod(w, r, http.MethodGet); err != nil {
			return err
		}
		return writeAdminJSON(w, http.StatusOK, svc.Keys())
	case "rotate":
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		k, err := svc.RotateSigningKey()
		if err != nil {
			return tokensAdminErr(err)
		}
		return writeAdminJSON(w, http.StatusOK, k)
	}
	return apiError(http.StatusNotFound, fmt.Errorf("no such keys route: %s", r.URL.Path))
}

// Interface guards
var _ caddy.AdminRouter = adminPartners{}
