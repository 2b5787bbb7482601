package tokens

import (
	"errors"
	"testing"
)

// Disabling a partner refuses its tokens at once and gives it no new one;
// enabling it again lets it get tokens again. Another partner is untouched.
func TestDisabledPartnerIsRefusedAtOnce(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", false)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, np.ClientID, np.ClientSecret)
	other := mustToken(t, s, "acme-client", acmeSecret)
	if err := s.SetPartnerActive("partner-initech", false); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token of a disabled partner", tok.AccessToken, FaultInvalid)
	if _, ok := s.Authenticate(np.ClientID, np.ClientSecret); ok {
		t.Fatal("a client of a disabled partner authenticated, want it refused")
	}
	if info, _ := s.PartnerInfo("partner-initech"); !info.Disabled {
		t.Fatalf("partner info %+v, want disabled", info)
	}
	if _, err := s.Verify(other.AccessToken); err != nil {
		t.Fatalf("another partner's token after the disable: %v, want it valid", err)
	}
	if err := s.SetPartnerActive("partner-initech", true); err != nil {
		t.Fatal(err)
	}
	again := mustToken(t, s, np.ClientID, np.ClientSecret)
	if again.AccessToken == tok.AccessToken {
		t.Fatal("the partner enabled again got back the token it held before the disable, want a new one")
	}
	if _, err := s.Verify(again.AccessToken); err != nil {
		t.Fatalf("a new token after enabling again: %v", err)
	}
	wantFault(t, s, "token issued before the partner's disable, after enabling it again", tok.AccessToken, FaultInvalid)
}

// Deleting a partner refuses its tokens at once, forgets it and its
// clients (also after a restart), and frees its id.
func TestDeletedPartnerIsGone(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", true)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, np.ClientID, np.ClientSecret)
	if err := s.DeletePartner("partner-initech"); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token of a deleted partner", tok.AccessToken, FaultInvalid)
	if _, ok := s.Authenticate(np.ClientID, np.ClientSecret); ok {
		t.Fatal("a client of a deleted partner authenticated")
	}
	if _, err := s.PartnerInfo("partner-initech"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("partner info after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeletePartner("partner-initech"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting it twice: %v, want ErrNotFound", err)
	}
	if err := s.load(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.dynPartners["partner-initech"]; ok {
		t.Fatal("the deleted partner came back from the data dir")
	}
	if _, err := s.CreatePartner("partner-initech", false); err != nil {
		t.Fatalf("creating the id again after delete: %v", err)
	}
}

func TestConfiguredPartnerIsNotDisabledOrDeletedHere(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	if err := s.SetPartnerActive("partner-acme", false); !errors.Is(err, ErrStatic) {
		t.Fatalf("disabling a configured partner: %v, want ErrStatic", err)
	}
	if err := s.DeletePartner("partner-acme"); !errors.Is(err, ErrStatic) {
		t.Fatalf("deleting a configured partner: %v, want ErrStatic", err)
	}
	if err := s.DeletePartner("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting an unknown partner: %v, want ErrNotFound", err)
	}
}
