package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// The operator rotates, disables and enables again, with the CLI, a client
// that a partner of the Caddyfile created in the portal.
func TestPortalClientOfACaddyfilePartnerIsChangedByTheOperator(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	id, secret := portalSignIn(t, g, "partner-acme").createClient(t)
	before := mustClientToken(t, g, id, secret)

	var rotated struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &rotated, "partner", "rotate-secret", "partner-acme", id)
	if rotated.ClientID != id || len(rotated.ClientSecret) < 43 || rotated.ClientSecret == secret {
		t.Fatalf("rotate-secret answered %+v, want a new secret for %s", rotated, id)
	}
	if _, err := clientToken(g, id, secret); !isInvalidClient(err) {
		t.Fatalf("the old secret after the operator's rotation: %v, want 401 invalid_client", err)
	}
	if st := shipmentsStatus(t, g, before.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("v4 shipments with a token of the old secret: %d, want 401", st)
	}
	after := mustClientToken(t, g, id, rotated.ClientSecret)

	cliJSON(t, g, nil, "partner", "disable-client", "partner-acme", id)
	if st := shipmentsStatus(t, g, after.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("v4 shipments with the disabled client's token: %d, want 401", st)
	}
	if _, err := clientToken(g, id, rotated.ClientSecret); !isInvalidClient(err) {
		t.Fatalf("a token for the disabled client: %v, want 401 invalid_client", err)
	}
	cliJSON(t, g, nil, "partner", "enable-client", "partner-acme", id)
	if st := shipmentsStatus(t, g, mustClientToken(t, g, id, rotated.ClientSecret).AccessToken); st != http.StatusOK {
		t.Fatalf("v4 shipments with a token of the client enabled again: %d, want 200", st)
	}
}

// A client defined in the Caddyfile is refused with an error that says to
// change it there; it keeps working.
func TestPortalOperatorCannotRotateACaddyfileClient(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	for _, cmd := range []string{"rotate-secret", "disable-client", "enable-client"} {
		out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", cmd, "partner-acme", demoAcmeID)
		if err == nil || !strings.Contains(out, "409") || !strings.Contains(out, "Caddyfile") {
			t.Errorf("%s of the Caddyfile's client: %v\n%s\nwant a failure with 409 saying to change it in the Caddyfile", cmd, err, out)
		}
	}
	mustClientToken(t, g, demoAcmeID, demoAcmeSecret)
}

// Through another partner's id, the CLI reaches no client of partner-acme
// (404), neither one made in the portal nor the Caddyfile's; both keep
// their secrets.
func TestPortalOperatorCannotRotateAClientThroughAnotherPartner(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	id, secret := portalSignIn(t, g, "partner-acme").createClient(t)
	for _, client := range []string{id, demoAcmeID} {
		for _, cmd := range []string{"rotate-secret", "disable-client"} {
			out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", cmd, "partner-globex", client)
			if err == nil || !strings.Contains(out, "404") {
				t.Errorf("%s partner-globex %s: %v\n%s\nwant a failure with 404", cmd, client, err, out)
			}
		}
	}
	mustClientToken(t, g, id, secret)
	mustClientToken(t, g, demoAcmeID, demoAcmeSecret)
}
