package tokens

import (
	"errors"
	"strings"
	"testing"
)

// The operator rotates the secret of a client that a partner of the
// configuration created in the portal: the old secret and its tokens stop
// at once, the new secret works.
func TestOperatorRotatesAPortalClientOfAConfiguredPartner(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, creds.ClientID, creds.ClientSecret)
	rotated, err := s.RotateSecret("partner-acme", creds.ClientID)
	if err != nil {
		t.Fatalf("rotating a portal client of a configured partner: %v, want a new secret", err)
	}
	if rotated.ClientSecret == creds.ClientSecret {
		t.Fatal("the rotation answered the old secret")
	}
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("the old secret still authenticates after the operator's rotation")
	}
	if _, verr := s.Verify(tok.AccessToken); verr == nil || verr.Fault != FaultInvalid {
		t.Fatalf("Verify(token of the old secret) = %v, want it refused as invalid", verr)
	}
	mustToken(t, s, creds.ClientID, rotated.ClientSecret)
}

// The operator disables and enables again a client that a partner of the
// configuration created in the portal.
func TestOperatorDisablesAndEnablesAPortalClientOfAConfiguredPartner(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetClientActive("partner-acme", creds.ClientID, false); err != nil {
		t.Fatalf("disabling a portal client of a configured partner: %v, want it disabled", err)
	}
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("a disabled client still authenticates")
	}
	if err := s.SetClientActive("partner-acme", creds.ClientID, true); err != nil {
		t.Fatalf("enabling it again: %v", err)
	}
	mustToken(t, s, creds.ClientID, creds.ClientSecret)
}

// A client defined in the configuration stays read-only for the operator
// (ErrStatic), and keeps its secret.
func TestOperatorCannotChangeAConfiguredClient(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	for name, err := range map[string]error{
		"rotate":  second(s.RotateSecret("partner-acme", "acme-client")),
		"disable": s.SetClientActive("partner-acme", "acme-client", false),
		"enable":  s.SetClientActive("partner-acme", "acme-client", true),
	} {
		if !errors.Is(err, ErrStatic) || !strings.Contains(err.Error(), "acme-client") {
			t.Errorf("%s of a configured client: %v, want ErrStatic naming the client", name, err)
		}
	}
	mustToken(t, s, "acme-client", acmeSecret)
}

// Through another partner's id, the operator reaches no client: neither a
// portal client nor a configured one of partner-acme, which keep working.
func TestOperatorCannotReachAClientThroughAnotherPartner(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreatePartner("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	for _, partner := range []string{"partner-globex", "partner-initech", "no-such-partner"} {
		for _, client := range []string{creds.ClientID, "acme-client"} {
			for name, err := range map[string]error{
				"rotate":  second(s.RotateSecret(partner, client)),
				"disable": s.SetClientActive(partner, client, false),
			} {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("%s of %s's client %s through %s: %v, want ErrNotFound", name, "partner-acme", client, partner, err)
				}
			}
		}
	}
	mustToken(t, s, creds.ClientID, creds.ClientSecret)
	mustToken(t, s, "acme-client", acmeSecret)
}
