package tokens

import (
	"testing"
	"time"
)

// A token that checked out keeps its standing only until the ring or the
// registry changes: every change that revokes it is seen on the very next
// request, although the request before it was answered from the cache.
func TestAChangeRevokesATokenThatCheckedOutBefore(t *testing.T) {
	for name, revoke := range map[string]func(t *testing.T, s *Service, partner, client string){
		"secret rotated": func(t *testing.T, s *Service, partner, client string) {
			if _, err := s.RotateSecret(partner, client); err != nil {
				t.Fatal(err)
			}
		},
		"client disabled": func(t *testing.T, s *Service, partner, client string) {
			if err := s.SetClientActive(partner, client, false); err != nil {
				t.Fatal(err)
			}
		},
		"partner disabled": func(t *testing.T, s *Service, partner, _ string) {
			if err := s.SetPartnerActive(partner, false); err != nil {
				t.Fatal(err)
			}
		},
		"partner deleted": func(t *testing.T, s *Service, partner, _ string) {
			if err := s.DeletePartner(partner); err != nil {
				t.Fatal(err)
			}
		},
		// A ring in which the token's kid names other key material (as
		// when a configured key is replaced under its kid).
		"signing key replaced under its kid": func(t *testing.T, s *Service, _, _ string) {
			old := s.ring.Load()
			secret, err := GenerateKey(newFakeRand(), old.current.Alg)
			if err != nil {
				t.Fatal(err)
			}
			other, err := configuredRing(old.alg, []KeyConfig{{KID: old.current.KID, Alg: old.current.Alg, Secret: secret}})
			if err != nil {
				t.Fatal(err)
			}
			s.ring.Store(other)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, _, _ := newTestService(t, Config{Partners: demoPartners()})
			np, err := s.CreatePartner("partner-initech", false)
			if err != nil {
				t.Fatal(err)
			}
			tok := mustToken(t, s, np.ClientID, np.ClientSecret)
			for range 2 { // the second from the cache, with the standing of the first
				if _, verr := s.VerifyHeader("Bearer " + tok.AccessToken); verr != nil {
					t.Fatalf("before the change: %s", verr.Reason)
				}
			}
			revoke(t, s, "partner-initech", np.ClientID)
			if id, verr := s.VerifyHeader("Bearer " + tok.AccessToken); verr == nil || verr.Fault != FaultInvalid {
				t.Fatalf("after the change: identity %+v, error %v; want the token refused as invalid", id, verr)
			}
		})
	}
}

// The time checks worked out once per token give the answers the bounds
// give: not usable while iat or nbf is after now + leeway rounded up to a
// whole second, usable until exp + leeway (exclusive), whatever the
// fraction of a second iat, nbf and now have.
func TestWorkedOutTimeChecksMatchTheBounds(t *testing.T) {
	base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, leeway := range []time.Duration{0, 300 * time.Millisecond, 30 * time.Second} {
		st := &settings{lifetime: time.Hour, leeway: leeway}
		for _, iatFrac := range []time.Duration{0, 400 * time.Millisecond} {
			for _, nbfOff := range []time.Duration{-1, 0, 2*time.Second + 700*time.Millisecond} {
				v := &verified{iat: base.Add(iatFrac), exp: base.Add(time.Hour)}
				if nbfOff >= 0 {
					v.nbf = base.Add(nbfOff)
				}
				v.setTimes(st)
				for now := base.Add(-time.Minute); now.Before(base.Add(time.Hour + time.Minute)); now = now.Add(100 * time.Millisecond) {
					limit := ceilSecond(now.Add(leeway))
					wantNotYet := v.iat.After(limit) || (!v.nbf.IsZero() && v.nbf.After(limit))
					wantExpired := !now.Before(v.exp.Add(leeway))
					if gotNotYet := !now.After(v.notBefore); gotNotYet != wantNotYet {
						t.Fatalf("leeway %v iat %v nbf %v now %v: not yet %v, the bounds say %v", leeway, v.iat, v.nbf, now, gotNotYet, wantNotYet)
					}
					if gotExpired := !now.Before(v.expires); gotExpired != wantExpired {
						t.Fatalf("leeway %v exp %v now %v: expired %v, the bounds say %v", leeway, v.exp, now, gotExpired, wantExpired)
					}
				}
			}
		}
	}
}
