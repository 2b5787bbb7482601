package tokens

import (
	"errors"
	"testing"
)

// The operator's add-client is CreateClient, the portal's call: for a
// partner of the configuration it adds a client of that partner only,
// whose secret gets a token naming that partner, beside the configured
// client, which stays as it was.
func TestCreateClientAddsAClientOfTheNamedConfiguredPartnerOnly(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", DefaultClientLimit)
	if err != nil {
		t.Fatalf("adding a client to a configured partner: %v, want new credentials", err)
	}
	tok := mustToken(t, s, creds.ClientID, creds.ClientSecret)
	id, verr := s.Verify(tok.AccessToken)
	if verr != nil || id.PartnerID != "partner-acme" || id.ClientID != creds.ClientID {
		t.Fatalf("Verify(token of the added client) = %+v, %v; want partner-acme's client %s", id, verr, creds.ClientID)
	}
	if !hasClient(s.PartnerClients("partner-acme"), creds.ClientID, false) {
		t.Errorf("partner-acme's clients %+v lack the added %s as a run-time client", s.PartnerClients("partner-acme"), creds.ClientID)
	}
	if hasClient(s.PartnerClients("partner-globex"), creds.ClientID, false) {
		t.Errorf("partner-globex lists partner-acme's added client %s", creds.ClientID)
	}
	mustToken(t, s, "acme-client", acmeSecret)
}

// The limit counts the partner's own clients, those of the configuration
// included, and no other partner's.
func TestCreateClientLimitCountsOnlyTheNamedPartnersClients(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	// partner-globex fills up to 3 clients: 1 configured + 2 added.
	for i := 0; i < 2; i++ {
		if _, err := s.CreateClient("partner-globex", 3); err != nil {
			t.Fatalf("globex client %d: %v", i+2, err)
		}
	}
	if _, err := s.CreateClient("partner-acme", 2); err != nil {
		t.Fatalf("partner-acme's second client with a limit of 2: %v, want it added (globex's clients are not acme's)", err)
	}
	if _, err := s.CreateClient("partner-acme", 2); !errors.Is(err, ErrLimit) {
		t.Fatalf("partner-acme's third client with a limit of 2: %v, want ErrLimit", err)
	}
	if n := len(s.PartnerClients("partner-acme")); n != 2 {
		t.Fatalf("partner-acme has %d clients after the refusal, want 2", n)
	}
}

// A disabled partner gets no new client (ErrDisabled, an ErrInvalid as the
// portal maps it), and an unknown one is ErrNotFound.
func TestCreateClientRefusesADisabledOrUnknownPartner(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	if _, err := s.CreatePartner("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPartnerActive("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	before := len(s.PartnerClients("partner-initech"))
	_, err := s.CreateClient("partner-initech", DefaultClientLimit)
	if !errors.Is(err, ErrDisabled) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("a client for a disabled partner: %v, want ErrDisabled (and ErrInvalid)", err)
	}
	if n := len(s.PartnerClients("partner-initech")); n != before {
		t.Fatalf("the disabled partner has %d clients after the refusal, want %d", n, before)
	}
	if _, err := s.CreateClient("no-such-partner", DefaultClientLimit); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a client for an unknown partner: %v, want ErrNotFound", err)
	}
}

func hasClient(cs []PartnerClient, id string, static bool) bool {
	for _, c := range cs {
		if c.ID == id && c.Static == static {
			return true
		}
	}
	return false
}
