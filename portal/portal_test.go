package portal_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
)

func TestALinkSignsInOnce(t *testing.T) {
	s, _ := newService(t)
	l, err := s.CreateLink("P1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := s.Exchange(l.Token, limits, "", "")
	if err != nil || ns.Partner != "P1" {
		t.Fatalf("Exchange = %+v, %v; want a session of P1", ns, err)
	}
	if _, err := s.Exchange(l.Token, limits, "", ""); !errors.Is(err, portal.ErrInvalidLink) {
		t.Fatalf("a second Exchange of the link = %v, want ErrInvalidLink", err)
	}
}

func TestAnExpiredLinkIsRefused(t *testing.T) {
	s, clk := newService(t)
	l, err := s.CreateLink("P1", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(5 * time.Minute)
	if _, err := s.Exchange(l.Token, limits, "", ""); !errors.Is(err, portal.ErrInvalidLink) {
		t.Fatalf("Exchange of an expired link = %v, want ErrInvalidLink", err)
	}
}

func TestALinkWithAWrongSecretIsRefusedAndStaysUsable(t *testing.T) {
	s, _ := newService(t)
	l, err := s.CreateLink("P1", 0)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(l.Token, ".")
	for _, bad := range []string{id + ".wrong", id, "", "pl.x", strings.Repeat("a", 500), l.Token + "x"} {
		if _, err := s.Exchange(bad, limits, "", ""); !errors.Is(err, portal.ErrInvalidLink) {
			t.Fatalf("Exchange(%.20q) = %v, want ErrInvalidLink", bad, err)
		}
	}
	if _, err := s.Exchange(l.Token, limits, "", ""); err != nil {
		t.Fatalf("the right link after wrong guesses: %v, want a session (a guess must not use it up)", err)
	}
}

func TestLinkCreationIsLimitedPerPartner(t *testing.T) {
	s, clk := newService(t)
	for range portal.MaxOpenLinks {
		if _, err := s.CreateLink("P1", 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateLink("P1", 10*time.Minute); !errors.Is(err, portal.ErrTooManyLinks) {
		t.Fatalf("link %d: %v, want ErrTooManyLinks", portal.MaxOpenLinks+1, err)
	}
	if _, err := s.CreateLink("P2", 10*time.Minute); err != nil {
		t.Fatalf("another partner's link: %v, want it created", err)
	}
	clk.Add(10 * time.Minute)
	if _, err := s.CreateLink("P1", 10*time.Minute); err != nil {
		t.Fatalf("a link once the others expired: %v, want it created", err)
	}
}

func TestLinkLifetimeIsBounded(t *testing.T) {
	s, _ := newService(t)
	for _, ttl := range []time.Duration{time.Second, 25 * time.Hour} {
		if _, err := s.CreateLink("P1", ttl); !errors.Is(err, portal.ErrInvalidTTL) {
			t.Fatalf("CreateLink(ttl %v) = %v, want ErrInvalidTTL", ttl, err)
		}
	}
}

func TestASessionEndsWhenIdle(t *testing.T) {
	s, clk := newService(t)
	ns := signIn(t, s, "P1")
	clk.Add(29 * time.Minute)
	if _, err := s.Check(ns.Token); err != nil {
		t.Fatalf("Check after 29 idle minutes: %v, want the session", err)
	}
	clk.Add(29 * time.Minute)
	if _, err := s.Check(ns.Token); err != nil {
		t.Fatalf("Check 29 minutes after the last use: %v, want the session (use resets the idle limit)", err)
	}
	clk.Add(30 * time.Minute)
	if _, err := s.Check(ns.Token); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("Check after 30 idle minutes: %v, want ErrNoSession", err)
	}
}

func TestASessionEndsAtItsAbsoluteLimitEvenWhenUsed(t *testing.T) {
	s, clk := newService(t)
	ns := signIn(t, s, "P1")
	for range 7 {
		clk.Add(15 * time.Minute)
		if _, err := s.Check(ns.Token); err != nil {
			t.Fatalf("Check at %v: %v", clk.Now(), err)
		}
	}
	clk.Add(15 * time.Minute)
	if _, err := s.Check(ns.Token); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("Check 2h after sign-in: %v, want ErrNoSession", err)
	}
}

func TestSignOutAndRevokeEndTheSession(t *testing.T) {
	s, _ := newService(t)
	a, b := signIn(t, s, "P1"), signIn(t, s, "P1")
	if err := s.SignOut(a.Session); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(a.Token); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("Check after sign-out: %v, want ErrNoSession", err)
	}
	list, err := s.Sessions("P1")
	if err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("Sessions(P1) = %+v, %v; want only the other session", list, err)
	}
	if p, err := s.RevokeSession(b.ID); err != nil || p != "P1" {
		t.Fatalf("RevokeSession = %q, %v; want P1", p, err)
	}
	if _, err := s.Check(b.Token); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("Check after revocation: %v, want ErrNoSession", err)
	}
	if _, err := s.RevokeSession(b.ID); !errors.Is(err, portal.ErrNotFound) {
		t.Fatalf("revoking again: %v, want ErrNotFound", err)
	}
}

func TestASessionTokenWithAWrongSecretIsRefused(t *testing.T) {
	s, _ := newService(t)
	ns := signIn(t, s, "P1")
	id, _, _ := strings.Cut(ns.Token, ".")
	if _, err := s.Check(id + ".forged"); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("Check(session id with a forged secret) = %v, want ErrNoSession", err)
	}
}

func TestTheCSRFTokenBelongsToItsSession(t *testing.T) {
	s, _ := newService(t)
	a, b := signIn(t, s, "P1"), signIn(t, s, "P1")
	sa, err := s.Check(a.Token)
	if err != nil {
		t.Fatal(err)
	}
	if !sa.CheckCSRF(sa.CSRFToken()) {
		t.Fatal("a session refused its own CSRF token")
	}
	if sa.CheckCSRF(b.Session.CSRFToken()) {
		t.Fatal("a session accepted another session's CSRF token")
	}
	if sa.CheckCSRF("") || (portal.Session{}).CheckCSRF("") {
		t.Fatal("an empty CSRF token was accepted")
	}
}

func TestTheAuditLogKeepsRecordsNewestFirst(t *testing.T) {
	s, clk := newService(t)
	for _, a := range []string{"create_client", "rotate_client"} {
		if err := s.Record(portal.AuditRecord{Partner: "P1", Actor: portal.ActorPartner, Action: a, Target: "c1"}); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
	}
	recs, err := s.Audit("P1", time.Time{}, 0)
	if err != nil || len(recs) != 2 || recs[0].Action != "rotate_client" || recs[0].Outcome != "ok" || recs[1].At.IsZero() {
		t.Fatalf("Audit = %+v, %v; want rotate_client then create_client, outcome ok, timed", recs, err)
	}
}

func TestEndPartnerEndsItsSessionsAndLinksOnly(t *testing.T) {
	s, _ := newService(t)
	a, b := signIn(t, s, "P1"), signIn(t, s, "P2")
	l, err := s.CreateLink("P1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.EndPartner("P1"); err != nil || n != 1 {
		t.Fatalf("EndPartner(P1) = %d, %v; want 1 session ended", n, err)
	}
	if _, err := s.Check(a.Token); !errors.Is(err, portal.ErrNoSession) {
		t.Fatalf("P1's session after EndPartner: %v, want ErrNoSession", err)
	}
	if _, err := s.Exchange(l.Token, limits, "", ""); !errors.Is(err, portal.ErrInvalidLink) {
		t.Fatalf("P1's unused link after EndPartner: %v, want ErrInvalidLink", err)
	}
	if _, err := s.Check(b.Token); err != nil {
		t.Fatalf("P2's session after EndPartner(P1): %v, want it live", err)
	}
}
