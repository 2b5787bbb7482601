package adminapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	// The portal handler, whose max_clients the operator keeps to.
	_ "github.com/fulfilgate/fulfilgate/modules/fulfilhttp/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// loadStaticPartnersWithPortal is loadStaticPartners with a portal handler
// of max_clients 3.
func loadStaticPartnersWithPortal(t *testing.T) (*tokens.Service, string) {
	t.Helper()
	return loadStaticPartners(t, `"http":{"servers":{"portal":{"listen":["127.0.0.1:0"],"automatic_https":{"disable":true},
		"routes":[{"handle":[{"handler":"fulfilment_portal","max_clients":3}]}]}}}`)
}

// addClient calls POST /fulfilment/partners/{id}/clients and decodes a 201.
func addClient(t *testing.T, partner string) (int, tokens.Credentials, string) {
	t.Helper()
	status, body := partnersDo(t, http.MethodPost, "/fulfilment/partners/"+partner+"/clients")
	var creds tokens.Credentials
	if status == http.StatusCreated {
		if err := json.Unmarshal(body, &creds); err != nil {
			t.Fatalf("add-client answered 201 %s: %v", body, err)
		}
	}
	return status, creds, string(body)
}

// The admin API adds a client to a partner of the configuration: 201 with
// the id and the secret (shown once), and the client is that partner's.
func TestAdminAddsAClientToAConfiguredPartner(t *testing.T) {
	svc, secret := loadStaticPartnersWithPortal(t)
	status, creds, body := addClient(t, "partner-acme")
	if status != http.StatusCreated || creds.ClientID == "" || len(creds.ClientSecret) < 43 {
		t.Fatalf("add-client for partner-acme answered %d %s, want 201 with a client id and secret", status, body)
	}
	c, ok := svc.Authenticate(creds.ClientID, creds.ClientSecret)
	if !ok || c.PartnerID != "partner-acme" {
		t.Fatalf("the added client authenticates %v as %+v, want partner-acme's", ok, c)
	}
	if _, ok := svc.Authenticate("acme-client", secret); !ok {
		t.Fatal("the configured client stopped authenticating")
	}
	for _, p := range svc.Partners() {
		if strings.Contains(fmt.Sprint(p), creds.ClientSecret) {
			t.Fatal("the partner listing shows the added client's secret")
		}
	}
}

// The admin API keeps to the portal's max_clients (3 here), counting the
// configured client: partner-acme gets 2 more, then 409; partner-globex's
// count is its own.
func TestAdminAddClientKeepsToThePortalsLimit(t *testing.T) {
	svc, _ := loadStaticPartnersWithPortal(t)
	for i := 0; i < 2; i++ {
		if status, _, body := addClient(t, "partner-acme"); status != http.StatusCreated {
			t.Fatalf("client %d of partner-acme answered %d %s, want 201 (limit 3, 1 configured)", i+2, status, body)
		}
	}
	status, _, body := addClient(t, "partner-acme")
	if status != http.StatusConflict || !strings.Contains(body, "partner-acme") || !strings.Contains(body, "max_clients") {
		t.Fatalf("a 4th client of partner-acme answered %d %s, want 409 naming the partner and max_clients", status, body)
	}
	if n := len(svc.PartnerClients("partner-acme")); n != 3 {
		t.Fatalf("partner-acme has %d clients, want 3", n)
	}
	if status, _, body := addClient(t, "partner-globex"); status != http.StatusCreated {
		t.Fatalf("partner-globex's first client answered %d %s, want 201", status, body)
	}
}

// An unknown partner is 404, a disabled one 409 (as the portal refuses
// it), and neither gets a client.
func TestAdminAddClientRefusesAnUnknownOrDisabledPartner(t *testing.T) {
	svc, _ := loadStaticPartnersWithPortal(t)
	if status, _, body := addClient(t, "no-such-partner"); status != http.StatusNotFound {
		t.Errorf("add-client for an unknown partner answered %d %s, want 404", status, body)
	}
	if _, err := svc.CreatePartner("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetPartnerActive("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	status, _, body := addClient(t, "partner-initech")
	if status != http.StatusConflict || !strings.Contains(body, "disabled") {
		t.Fatalf("add-client for a disabled partner answered %d %s, want 409 saying it is disabled", status, body)
	}
	if n := len(svc.PartnerClients("partner-initech")); n != 1 {
		t.Fatalf("the disabled partner has %d clients, want its 1 first one", n)
	}
}

// The path names the partner the client belongs to: a client added
// through partner-globex's path is globex's, no client of partner-acme
// appears, and a client id or extra segments in the path reach nothing.
func TestAdminAddClientBelongsToTheNamedPartnerOnly(t *testing.T) {
	svc, _ := loadStaticPartnersWithPortal(t)
	before := len(svc.PartnerClients("partner-acme"))
	status, creds, body := addClient(t, "partner-globex")
	if status != http.StatusCreated {
		t.Fatalf("add-client for partner-globex answered %d %s", status, body)
	}
	if c, ok := svc.Authenticate(creds.ClientID, creds.ClientSecret); !ok || c.PartnerID != "partner-globex" {
		t.Fatalf("the client added through partner-globex's path authenticates %v as %+v, want partner-globex's", ok, c)
	}
	for _, target := range []string{
		"/fulfilment/partners/partner-acme/clients/acme-client",
		"/fulfilment/partners/partner-globex/clients/../../partner-acme/clients",
		"/fulfilment/partners/partner-globex%2F..%2Fpartner-acme/clients",
	} {
		if status, body := partnersDo(t, http.MethodPost, target); status == http.StatusCreated {
			t.Errorf("POST %s answered 201 %s, want a refusal", target, body)
		}
	}
	if n := len(svc.PartnerClients("partner-acme")); n != before {
		t.Fatalf("partner-acme has %d clients after adds through other paths, want %d", n, before)
	}
}

// Without a portal in the config, add-client keeps to the portal's default
// limit: partner-acme (1 configured client) gets 9 more, then 409.
func TestAdminAddClientWithoutAPortalKeepsToTheDefaultLimit(t *testing.T) {
	svc, _ := loadStaticPartners(t)
	for i := 1; i < tokens.DefaultClientLimit; i++ {
		if status, _, body := addClient(t, "partner-acme"); status != http.StatusCreated {
			t.Fatalf("client %d of partner-acme answered %d %s, want 201", i+1, status, body)
		}
	}
	if status, _, body := addClient(t, "partner-acme"); status != http.StatusConflict {
		t.Fatalf("client %d of partner-acme answered %d %s, want 409", tokens.DefaultClientLimit+1, status, body)
	}
	if n := len(svc.PartnerClients("partner-acme")); n != tokens.DefaultClientLimit {
		t.Fatalf("partner-acme has %d clients, want %d", n, tokens.DefaultClientLimit)
	}
}
