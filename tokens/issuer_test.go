package tokens

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// exp - iat is exactly the configured lifetime, whatever the fraction of
// the second the token is issued in; expires_in equals it, the token lives
// at least expires_in from the moment of issue, and it verifies at once.
func TestExpMinusIatIsTheLifetime(t *testing.T) {
	for _, lt := range []time.Duration{1800 * time.Second, 2700 * time.Second, 3600 * time.Second} {
		for _, frac := range []time.Duration{0, time.Nanosecond, 250 * time.Millisecond, 999_999_999} {
			s, clk, _ := newTestService(t, Config{Lifetime: lt, Partners: demoPartners()})
			clk.Add(-clk.Now().Sub(clk.Now().Truncate(time.Second)) + frac)
			now := clk.Now()
			tok := mustToken(t, s, "acme-client", acmeSecret)
			var claims map[string]any
			decodeSeg(t, strings.Split(tok.AccessToken, ".")[1], &claims)
			iat := time.Unix(int64(claims["iat"].(float64)), 0)
			exp := time.Unix(int64(claims["exp"].(float64)), 0)
			name := lt.String() + " +" + frac.String()
			if got := exp.Sub(iat); got != lt {
				t.Errorf("%s: exp - iat = %v, want %v", name, got, lt)
			}
			if tok.ExpiresIn != int(lt/time.Second) {
				t.Errorf("%s: expires_in %d, want %d", name, tok.ExpiresIn, int(lt/time.Second))
			}
			if left := exp.Sub(now); left < time.Duration(tok.ExpiresIn)*time.Second || left >= lt+time.Second {
				t.Errorf("%s: the token lives %v after issue, expires_in says %d s", name, left, tok.ExpiresIn)
			}
			if d := iat.Sub(now); d < 0 || d >= time.Second {
				t.Errorf("%s: iat is %v after now", name, d)
			}
			if _, err := s.Verify(tok.AccessToken); err != nil {
				t.Errorf("%s: fresh token refused: %v", name, err)
			}
			// A reuse in the same second answers the same lifetime.
			if again := mustToken(t, s, "acme-client", acmeSecret); !again.Reused || again.ExpiresIn != tok.ExpiresIn {
				t.Errorf("%s: reuse answered %+v", name, again)
			}
		}
	}
}

// The verifier's tolerance for an iat less than a second ahead (the issuer
// rounds iat up) does not stretch to a whole second or more.
func TestIatAheadTolerance(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()}) // now = 10:00:00.25
	now := clk.Now()
	k := currentKey(s)
	hdr := map[string]any{"typ": "at+jwt", "kid": k.KID}
	withIat := func(iat time.Time) string {
		c := goodClaims(s, now, now.Add(time.Hour))
		c["iat"] = iat.Unix()
		return forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, c)
	}
	if _, err := s.Verify(withIat(now.Truncate(time.Second).Add(time.Second))); err != nil {
		t.Fatalf("iat = now rounded up refused: %v", err)
	}
	wantFault(t, s, "iat 2 s ahead", withIat(now.Truncate(time.Second).Add(2*time.Second)), FaultInvalid)
}
