package fulfilhttp

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// Variables the Bearer guard (fulfilment_auth) sets on an authenticated
// request. In Caddy placeholders they read {http.vars.fulfilment.partner_id}
// and {http.vars.fulfilment.client_id}.
const (
	PartnerIDVar = "fulfilment.partner_id"
	ClientIDVar  = "fulfilment.client_id"
)

// IdentityHeaders are the header names of one Bearer guard: Identity carries
// the verified partner id upstream, and none of Protected (the identity, the
// request id and the headers the guard strips) may be named in Connection,
// where a proxy would take it for a hop-by-hop header and remove it.
type IdentityHeaders struct {
	Identity  string   // canonical header name
	Protected []string // canonical header names
}

// Verified returns the identity of partner as verified by the guard with
// these header names. Only the Bearer guard calls it, after it verified the
// partner's access token.
func (h *IdentityHeaders) Verified(partner string) VerifiedPartner {
	return VerifiedPartner{id: partner, headers: h}
}

// Forward makes hdr carry partner under the identity header, and leaves
// none of the protected names in Connection: the last step before a
// request is forwarded.
func (h *IdentityHeaders) Forward(hdr http.Header, partner string) {
	if v := hdr[h.Identity]; len(v) != 1 || v[0] != partner {
		hdr[h.Identity] = []string{partner}
	}
	if _, ok := hdr["Connection"]; ok {
		DropConnectionTokens(hdr, h.Protected)
	}
}

// VerifiedPartner is the identity the Bearer guard attaches to a request it
// let through, by pointer (*VerifiedPartner) as the value of the variable
// fulfilment.partner_id in the request's context. It is a Go value, not a
// string, so nothing a configuration or a request can set (a header, a vars
// or map directive, the token endpoint's log variable) is one: a handler
// that forwards an identity takes it only from here. It prints as the
// partner id, which is what the placeholder shows.
type VerifiedPartner struct {
	id      string
	headers *IdentityHeaders // of the guard that verified it
}

// Valid reports whether p is an identity a guard verified (the zero
// value is not).
func (p VerifiedPartner) Valid() bool { return p.id != "" && p.headers != nil }

// ID returns the partner id.
func (p VerifiedPartner) ID() string { return p.id }

// String returns the partner id ({http.vars.fulfilment.partner_id}).
func (p VerifiedPartner) String() string { return p.id }

// Forward makes hdr carry this identity under the verifying guard's
// identity header (IdentityHeaders.Forward).
func (p VerifiedPartner) Forward(hdr http.Header) { p.headers.Forward(hdr, p.id) }

// VerifiedFromRequest returns the identity the Bearer guard attached to r;
// false when no guard let r through.
func VerifiedFromRequest(r *http.Request) (VerifiedPartner, bool) {
	p, ok := caddyhttp.GetVar(r.Context(), PartnerIDVar).(*VerifiedPartner)
	if !ok || p == nil || !p.Valid() {
		return VerifiedPartner{}, false
	}
	return *p, true
}

// PartnerFromRequest returns the partner the Bearer guard authenticated for
// r; false when the request did not pass the guard.
func PartnerFromRequest(r *http.Request) (string, bool) {
	p, ok := VerifiedFromRequest(r)
	return p.id, ok
}
