package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// Variables the Bearer guard (fulfilment_auth) sets on an authenticated
// request. In Caddy placeholders they read {http.vars.fulfilment.partner_id}
// and {http.vars.fulfilment.client_id}.
const (
	partnerIDVar = "fulfilment.partner_id"
	clientIDVar  = "fulfilment.client_id"
)

// partnerFromRequest returns the partner the Bearer guard authenticated for
// r; false when the request did not pass the guard.
func partnerFromRequest(r *http.Request) (string, bool) {
	id, _ := caddyhttp.GetVar(r.Context(), partnerIDVar).(string)
	return id, id != ""
}

// partner returns the partner with id from memory (static or dynamic);
// false when there is none or the app is not running.
func (a *App) partner(id string) (tokens.Partner, bool) {
	svc := a.tokenService()
	if svc == nil {
		return tokens.Partner{}, false
	}
	return svc.Partner(id)
}
