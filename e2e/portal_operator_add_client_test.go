package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// startPortalGatewayMaxClients runs the demo Caddyfile with the portal's
// max_clients set to n.
func startPortalGatewayMaxClients(t *testing.T, n string) *repoGateway {
	t.Helper()
	return startRepoGateway(t, withPortalOption(t, repoCaddyfile(t), "max_clients "+n))
}

type addedClient struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// partnerClientIDs returns the client ids `partner show` lists.
func partnerClientIDs(t *testing.T, g *repoGateway, partner string) []string {
	t.Helper()
	var p struct {
		Clients []struct {
			ID string `json:"client_id"`
		} `json:"clients"`
	}
	cliJSON(t, g, &p, "partner", "show", partner)
	ids := make([]string, 0, len(p.Clients))
	for _, c := range p.Clients {
		if c.ID == "" {
			t.Fatalf("partner show %s lists a client without an id", partner)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The operator adds, with the CLI, a client for a partner of the
// Caddyfile: its secret is printed once, it gets a token with the OAuth2
// client-credentials flow and calls v4, and the partner sees it in the
// portal beside the Caddyfile's client, which keeps working.
func TestPortalOperatorAddsAClientForACaddyfilePartner(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	var added addedClient
	cliJSON(t, g, &added, "partner", "add-client", "partner-acme")
	if added.ClientID == "" || len(added.ClientSecret) < 43 {
		t.Fatalf("add-client partner-acme answered %+v, want a client id and a secret", added)
	}
	tok, err := tokenFor(t, g, added.ClientID, added.ClientSecret)
	if err != nil {
		t.Fatalf("a client-credentials token for the added client: %v", err)
	}
	if st := shipmentsStatus(t, g, tok); st != http.StatusOK {
		t.Fatalf("v4 shipments with the added client's token: %d, want 200", st)
	}
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "show", "partner-acme")
	if err != nil || strings.Contains(out, added.ClientSecret) || !strings.Contains(out, added.ClientID) {
		t.Fatalf("partner show partner-acme: %v\n%s\nwant the added client listed without its secret", err, out)
	}
	if _, page := portalSignIn(t, g, "partner-acme").get(t, "/settings/integrations"); !strings.Contains(page, added.ClientID) ||
		strings.Contains(page, added.ClientSecret) {
		t.Fatalf("the portal's integrations page does not list the added client %s (or shows its secret)", added.ClientID)
	}
	mustClientToken(t, g, demoAcmeID, demoAcmeSecret)
}

// add-client keeps to the portal's max_clients (2 here), counting the
// Caddyfile's client: one more is added, the next is refused with 409 and
// no client is created; another partner's count is its own.
func TestPortalOperatorAddClientKeepsToMaxClients(t *testing.T) {
	t.Parallel()
	g := startPortalGatewayMaxClients(t, "2")
	var added addedClient
	cliJSON(t, g, &added, "partner", "add-client", "partner-acme")
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "add-client", "partner-acme")
	if err == nil || !strings.Contains(out, "409") || !strings.Contains(out, "max_clients") {
		t.Fatalf("a 3rd client of partner-acme with max_clients 2: %v\n%s\nwant a failure with 409 naming max_clients", err, out)
	}
	if ids := partnerClientIDs(t, g, "partner-acme"); len(ids) != 2 {
		t.Fatalf("partner-acme has clients %v after the refusal, want 2", ids)
	}
	// The partner is refused in the portal too: the limit is one rule.
	ps := portalSignIn(t, g, "partner-acme")
	if st, _, _ := ps.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {ps.csrf(t)}}); st != http.StatusConflict {
		t.Fatalf("a 3rd client created in the portal answered %d, want 409", st)
	}
	cliJSON(t, g, nil, "partner", "add-client", "partner-globex")
	mustClientToken(t, g, added.ClientID, added.ClientSecret)
}

// A client added through partner-globex's name is globex's only: it is
// not listed for partner-acme, and a partner argument that tries to walk
// to partner-acme's path adds nothing. An unknown partner is 404.
func TestPortalOperatorAddClientBelongsToTheNamedPartnerOnly(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	acmeBefore := partnerClientIDs(t, g, "partner-acme")
	var added addedClient
	cliJSON(t, g, &added, "partner", "add-client", "partner-globex")
	if !containsString(partnerClientIDs(t, g, "partner-globex"), added.ClientID) {
		t.Fatalf("partner-globex does not list the client %s added through its name", added.ClientID)
	}
	for _, arg := range []string{"partner-globex/../partner-acme", "../partners/partner-acme", "partner-acme/clients/" + demoAcmeID} {
		out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "add-client", arg)
		if err == nil {
			t.Errorf("add-client %q succeeded:\n%s\nwant a refusal", arg, out)
		}
	}
	if after := partnerClientIDs(t, g, "partner-acme"); len(after) != len(acmeBefore) || containsString(after, added.ClientID) {
		t.Fatalf("partner-acme's clients went from %v to %v, want them unchanged", acmeBefore, after)
	}
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "add-client", "no-such-partner")
	if err == nil || !strings.Contains(out, "404") {
		t.Fatalf("add-client no-such-partner: %v\n%s\nwant a failure with 404", err, out)
	}
	if _, err := tokenFor(t, g, added.ClientID, added.ClientSecret); err != nil {
		t.Fatalf("a token for globex's added client: %v", err)
	}
}

// A disabled partner gets no client from the operator, as the portal
// refuses it: 409 saying so.
func TestPortalOperatorAddClientRefusesADisabledPartner(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	cliJSON(t, g, nil, "partner", "create", "partner-initech")
	cliJSON(t, g, nil, "partner", "disable", "partner-initech")
	out, err := g.CLI("fulfilment", "--address", g.Admin, "partner", "add-client", "partner-initech")
	if err == nil || !strings.Contains(out, "409") || !strings.Contains(out, "disabled") {
		t.Fatalf("add-client for a disabled partner: %v\n%s\nwant a failure with 409 saying it is disabled", err, out)
	}
	if ids := partnerClientIDs(t, g, "partner-initech"); len(ids) != 1 {
		t.Fatalf("the disabled partner has clients %v, want its first one only", ids)
	}
}
