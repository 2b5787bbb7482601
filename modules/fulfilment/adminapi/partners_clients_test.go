package adminapi

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// loadStaticPartners runs a config with two partners of the configuration,
// partner-acme (client acme-client) and partner-globex, and the apps given
// (see loadAppConfig), and returns the token service and acme-client's
// secret.
func loadStaticPartners(t *testing.T, apps ...string) (*tokens.Service, string) {
	t.Helper()
	secret, err := tokens.NewSecret(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	app := loadAppConfig(t, fmt.Sprintf(`"tokens":{"partners":[
		{"id":"partner-acme","clients":[{"id":"acme-client","secret":%q}]},
		{"id":"partner-globex"}]}`, secret), apps...)
	svc := app.TokenService()
	if svc == nil {
		t.Fatal("the token service is not running")
	}
	return svc, secret
}

// The admin API rotates, disables and enables a client that a partner of
// the configuration created in the portal.
func TestAdminChangesAPortalClientOfAConfiguredPartner(t *testing.T) {
	svc, _ := loadStaticPartners(t)
	creds, err := svc.CreateClient("partner-acme", 10) // as the portal does
	if err != nil {
		t.Fatal(err)
	}
	base := "/fulfilment/partners/partner-acme/clients/" + creds.ClientID
	status, body := partnersDo(t, http.MethodPost, base+"/rotate")
	var rotated tokens.Credentials
	if status != http.StatusOK || json.Unmarshal(body, &rotated) != nil || rotated.ClientID != creds.ClientID ||
		len(rotated.ClientSecret) < 43 || rotated.ClientSecret == creds.ClientSecret {
		t.Fatalf("rotate answered %d %s, want 200 with a new secret for %s", status, body, creds.ClientID)
	}
	if _, ok := svc.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("the old secret still authenticates after the rotation")
	}
	if _, ok := svc.Authenticate(creds.ClientID, rotated.ClientSecret); !ok {
		t.Fatal("the rotated secret does not authenticate")
	}
	if status, body := partnersDo(t, http.MethodPost, base+"/disable"); status != http.StatusOK {
		t.Fatalf("disable answered %d %s, want 200", status, body)
	}
	if _, ok := svc.Authenticate(creds.ClientID, rotated.ClientSecret); ok {
		t.Fatal("the disabled client still authenticates")
	}
	if status, body := partnersDo(t, http.MethodPost, base+"/enable"); status != http.StatusOK {
		t.Fatalf("enable answered %d %s, want 200", status, body)
	}
	if _, ok := svc.Authenticate(creds.ClientID, rotated.ClientSecret); !ok {
		t.Fatal("the client enabled again does not authenticate")
	}
}

// A client defined in the configuration is refused with 409 and an error
// that says to change it in the Caddyfile; its secret keeps working.
func TestAdminRefusesToChangeAConfiguredClient(t *testing.T) {
	svc, secret := loadStaticPartners(t)
	for _, action := range []string{"rotate", "disable", "enable"} {
		status, body := partnersDo(t, http.MethodPost, "/fulfilment/partners/partner-acme/clients/acme-client/"+action)
		if status != http.StatusConflict || !strings.Contains(string(body), "acme-client") || !strings.Contains(string(body), "Caddyfile") {
			t.Errorf("%s of a configured client answered %d %q, want 409 naming the client and the Caddyfile", action, status, body)
		}
	}
	if _, ok := svc.Authenticate("acme-client", secret); !ok {
		t.Fatal("the configured client stopped authenticating")
	}
}

// Through another partner's path, the admin API reaches no client of
// partner-acme (404), and the client keeps its secret.
func TestAdminCannotReachAClientThroughAnotherPartner(t *testing.T) {
	svc, secret := loadStaticPartners(t)
	creds, err := svc.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{creds.ClientID, "acme-client"} {
		for _, action := range []string{"rotate", "disable"} {
			target := "/fulfilment/partners/partner-globex/clients/" + client + "/" + action
			if status, body := partnersDo(t, http.MethodPost, target); status != http.StatusNotFound {
				t.Errorf("POST %s answered %d %s, want 404", target, status, body)
			}
		}
	}
	if _, ok := svc.Authenticate(creds.ClientID, creds.ClientSecret); !ok {
		t.Fatal("partner-acme's portal client stopped authenticating")
	}
	if _, ok := svc.Authenticate("acme-client", secret); !ok {
		t.Fatal("partner-acme's configured client stopped authenticating")
	}
}
