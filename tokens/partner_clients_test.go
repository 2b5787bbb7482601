package tokens

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRotateWithGraceKeepsTheOldSecretUntilTheGraceEnds(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	oldTok := mustToken(t, s, creds.ClientID, creds.ClientSecret)
	rotated, err := s.RotateClientSecret("partner-acme", creds.ClientID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Authenticate(creds.ClientID, rotated.ClientSecret); !ok {
		t.Fatal("the new secret did not authenticate")
	}
	clk.Add(59 * time.Minute)
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); !ok {
		t.Fatal("the old secret did not authenticate within the grace period")
	}
	if _, verr := s.Verify(oldTok.AccessToken); verr != nil {
		t.Fatalf("a token of the old secret was refused during the grace period: %v", verr)
	}
	clk.Add(time.Minute)
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("the old secret still authenticated when the grace period ended")
	}
	if _, ok := s.Authenticate(creds.ClientID, rotated.ClientSecret); !ok {
		t.Fatal("the new secret stopped authenticating when the grace period ended")
	}
}

func TestRotateWithoutGraceRevokesTheOldSecretAndItsTokens(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, creds.ClientID, creds.ClientSecret)
	if _, err := s.RotateClientSecret("partner-acme", creds.ClientID, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("the old secret authenticated after a rotation without grace")
	}
	if _, verr := s.Verify(tok.AccessToken); verr == nil || verr.Fault != FaultInvalid {
		t.Fatalf("Verify(old token) = %v, want it refused as invalid", verr)
	}
}

func TestTheGracePeriodSurvivesARestart(t *testing.T) {
	s, clk, dir := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateClientSecret("partner-acme", creds.ClientID, time.Hour); err != nil {
		t.Fatal(err)
	}
	closeStore(s)
	db := openDB(t, dir)
	t.Cleanup(func() { db.Close() })
	again, err := Open(Options{Store: db, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Configure(Config{Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Authenticate(creds.ClientID, creds.ClientSecret); !ok {
		t.Fatal("after a restart the old secret did not authenticate within the grace period")
	}
	clk.Add(time.Hour)
	if _, ok := again.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("after a restart the old secret authenticated past the grace period")
	}
}

func TestRevokeClientRefusesItsTokensAtOnce(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, creds.ClientID, creds.ClientSecret)
	if err := s.RevokeClient("partner-acme", creds.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, verr := s.Verify(tok.AccessToken); verr == nil || verr.Fault != FaultInvalid {
		t.Fatalf("Verify(token of a revoked client) = %v, want it refused as invalid", verr)
	}
	if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
		t.Fatal("a revoked client authenticated")
	}
	for _, c := range s.PartnerClients("partner-acme") {
		if c.ID == creds.ClientID {
			t.Fatalf("a revoked client is still listed: %+v", c)
		}
	}
}

func TestAPartnerCannotTouchAnotherPartnersOrTheConfigurationsClients(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	globex, err := s.CreateClient("partner-globex", 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateClientSecret("partner-acme", globex.ClientID, time.Hour); !errors.Is(err, ErrNotFound) {
		t.Fatalf("acme rotating globex's client: %v, want ErrNotFound", err)
	}
	if err := s.RevokeClient("partner-acme", globex.ClientID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("acme revoking globex's client: %v, want ErrNotFound", err)
	}
	if _, ok := s.Authenticate(globex.ClientID, globex.ClientSecret); !ok {
		t.Fatal("globex's client stopped working after acme's attempts")
	}
	if _, err := s.RotateClientSecret("partner-acme", "acme-client", time.Hour); !errors.Is(err, ErrStatic) {
		t.Fatalf("rotating a client of the configuration: %v, want ErrStatic", err)
	}
	if err := s.RevokeClient("partner-acme", "acme-client"); !errors.Is(err, ErrStatic) {
		t.Fatalf("revoking a client of the configuration: %v, want ErrStatic", err)
	}
	if err := s.RevokeClient("partner-acme", "globex-client"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoking another partner's client of the configuration: %v, want ErrNotFound", err)
	}
}

func TestCreateClientStopsAtTheLimitCountingTheConfigurationsClients(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	if _, err := s.CreateClient("partner-acme", 2); err != nil {
		t.Fatalf("the second client (one from the configuration, limit 2): %v", err)
	}
	if _, err := s.CreateClient("partner-acme", 2); !errors.Is(err, ErrLimit) {
		t.Fatalf("a third client with a limit of 2: %v, want ErrLimit", err)
	}
}

func TestPartnerClientsShowsHintLastUseAndStatic(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	creds, err := s.CreateClient("partner-acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	mustToken(t, s, creds.ClientID, creds.ClientSecret)
	cs := s.PartnerClients("partner-acme")
	if len(cs) != 2 || cs[0].ID != "acme-client" || !cs[0].Static || cs[0].Hint != "" {
		t.Fatalf("PartnerClients = %+v, want the configuration's client first, static, without a hint", cs)
	}
	c := cs[1]
	if c.ID != creds.ClientID || c.Static || !strings.HasSuffix(creds.ClientSecret, c.Hint) || len(c.Hint) != hintLen {
		t.Fatalf("client %+v: want the new client with the last %d characters of its secret as hint", c, hintLen)
	}
	if !c.LastUsed.Equal(clk.Now()) {
		t.Fatalf("LastUsed = %v, want the token's time %v", c.LastUsed, clk.Now())
	}
}

func TestLastUseIsWrittenAtMostEveryFewMinutes(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	first := clk.Now().UTC()
	mustToken(t, s, "acme-client", acmeSecret)
	clk.Add(usageEvery - time.Second)
	mustToken(t, s, "acme-client", acmeSecret)
	stored, err := s.store.ClientUsage()
	if err != nil {
		t.Fatal(err)
	}
	if !stored["acme-client"].Equal(first) {
		t.Fatalf("stored last use %v, want the first token's %v (no write within %v)", stored["acme-client"], first, usageEvery)
	}
	clk.Add(time.Second)
	mustToken(t, s, "acme-client", acmeSecret)
	stored, _ = s.store.ClientUsage()
	if !stored["acme-client"].Equal(clk.Now().UTC()) {
		t.Fatalf("stored last use %v, want %v once %v passed", stored["acme-client"], clk.Now(), usageEvery)
	}
}

func TestCreateClientRefusesWhenTheStoreHoldsClientsThisInstanceHasNotSeen(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	// Another instance sharing the store added a client of partner-acme;
	// this one has not reloaded: it counts one client, the configuration's.
	other := ClientRecord{ID: "acme-other-instance", Partner: "partner-acme", Hash: make([]byte, 32), Version: "v",
		OpaqueVersion: true, Active: true, Created: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	if err := s.store.PutClient(other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateClient("partner-acme", 2); !errors.Is(err, ErrLimit) {
		t.Fatalf("CreateClient with limit 2 beside the configuration's client and another instance's: %v, want ErrLimit", err)
	}
	cs, err := s.store.Clients()
	if err != nil || len(cs) != 1 || cs[0].ID != other.ID {
		t.Fatalf("stored clients after the refusal = %+v, %v; want only the other instance's", cs, err)
	}
}

// A client another instance revoked, which this one has not heard of yet:
// changing it here must not store it again.
func TestChangingAClientAnotherInstanceRevokedDoesNotStoreItAgain(t *testing.T) {
	for name, change := range map[string]func(s *Service, id string) error{
		"rotating its secret (portal)": func(s *Service, id string) error {
			_, err := s.RotateClientSecret("partner-acme", id, time.Hour)
			return err
		},
		"enabling it": func(s *Service, id string) error { return s.SetClientActive("partner-acme", id, true) },
	} {
		s, _, _ := newTestService(t, Config{Partners: demoPartners()})
		creds, err := s.CreateClient("partner-acme", 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.store.DeleteClient(creds.ClientID); err != nil { // the other instance's revoke
			t.Fatal(err)
		}
		if err := change(s, creds.ClientID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after another instance revoked the client: %v, want ErrNotFound", name, err)
		}
		cs, err := s.store.Clients()
		if err != nil || len(cs) != 0 {
			t.Errorf("%s after another instance revoked the client: stored clients %+v, %v; want none (the revoked client stays revoked)", name, cs, err)
		}
		if _, ok := s.Authenticate(creds.ClientID, creds.ClientSecret); ok {
			t.Errorf("%s after another instance revoked the client: its secret still authenticates here", name)
		}
	}
}
