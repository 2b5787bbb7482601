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

// verifiedPartner is the identity the Bearer guard attaches to a request it
// let through, as the value of the variable fulfilment.partner_id in the
// request's context. Its type is this package's own, so nothing else (a
// header, a vars or map directive, the token endpoint's log variable) can
// make one: a handler that forwards an identity takes it only from here.
// It prints as the partner id, which is what the placeholder shows.
type verifiedPartner struct {
	id    string
	guard *AuthHandler // the guard that verified it: its header names
}

// String returns the partner id ({http.vars.fulfilment.partner_id}).
func (p verifiedPartner) String() string { return p.id }

// verifiedFromRequest returns the identity the Bearer guard attached to r;
// false when no guard let r through.
func verifiedFromRequest(r *http.Request) (verifiedPartner, bool) {
	p, ok := caddyhttp.GetVar(r.Context(), partnerIDVar).(verifiedPartner)
	return p, ok && p.id != "" && p.guard != nil
}

// partnerFromRequest returns the partner the Bearer guard authenticated for
// r; false when the request did not pass the guard.
func partnerFromRequest(r *http.Request) (string, bool) {
	p, ok := verifiedFromRequest(r)
	return p.id, ok
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
