package fulfilhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// withVerifiedPartner returns r as the Bearer guard passes it on for
// partner (no identity if partner is empty): with Caddy's vars in its context.
func withVerifiedPartner(r *http.Request, partner string) *http.Request {
	vars := map[string]any{}
	if partner != "" {
		id := testHeaders().Verified(partner)
		vars[PartnerIDVar] = &id
	}
	return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, vars))
}

func TestPartnerFromRequestTakesOnlyTheGuardsIdentity(t *testing.T) {
	r := withVerifiedPartner(httptest.NewRequest(http.MethodGet, "/", nil), "partner-acme")
	if p, ok := PartnerFromRequest(r); !ok || p != "partner-acme" {
		t.Errorf("the guard's identity: got %q %v, want partner-acme", p, ok)
	}
	// A string in the same variable (a vars or map directive, the token
	// endpoint's log variable) is no identity.
	caddyhttp.SetVar(r.Context(), PartnerIDVar, "partner-acme")
	if p, ok := PartnerFromRequest(r); ok {
		t.Errorf("a plain string variable was taken as the identity %q", p)
	}
	caddyhttp.SetVar(r.Context(), PartnerIDVar, &VerifiedPartner{id: "partner-acme"})
	if p, ok := PartnerFromRequest(r); ok {
		t.Errorf("an identity without its guard was taken as %q", p)
	}
}

func TestVerifiedPartnerPrintsAsThePartnerID(t *testing.T) {
	r := withVerifiedPartner(httptest.NewRequest(http.MethodGet, "/", nil), "partner-acme")
	repl := caddyhttp.NewTestReplacer(r)
	if got := repl.ReplaceAll("{http.vars.fulfilment.partner_id}", ""); got != "partner-acme" {
		t.Errorf("{http.vars.fulfilment.partner_id} = %q, want partner-acme", got)
	}
}
