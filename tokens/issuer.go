package tokens

import (
	"encoding/base64"
	"fmt"
	"io"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// accessClaims are the claims of an access token: RFC 9068's iss, aud, sub
// (the partner), client_id, iat, exp, jti, and "sv", a MAC of the client's
// version (client_version.go): rotating the secret or disabling the client
// revokes the token.
type accessClaims struct {
	jwt.RegisteredClaims
	ClientID string `json:"client_id"`
	SV       string `json:"sv"`
}

// TokenType is the JWT "typ" header of access tokens (RFC 9068 §2.1).
const TokenType = "at+jwt"

// Token is the answer of a token request.
type Token struct {
	AccessToken string
	// ExpiresIn is the remaining lifetime in whole seconds: the configured
	// lifetime for a new token, at least 1800 for a reused one.
	ExpiresIn int
	Reused    bool
}

// issued is the current token of a client, kept for reuse.
type issued struct {
	token   string
	exp     time.Time
	key     *key         // the key that signed it
	cache   *verifyCache // the settings' cache: unchanged issuer, audience and algorithm
	version string
}

// Token returns an access token for an authenticated client: its current
// token while that has at least 1800 s left (and was signed by the current
// key under the current secret), else a new one.
func (s *Service) Token(c Client) (Token, error) {
	st, r := s.settings.Load(), s.ring.Load()
	now := s.clock()
	s.noteUse(c.ID, now)
	if v, ok := s.reuse.Load(c.ID); ok {
		is := v.(*issued)
		left := is.exp.Sub(now)
		// Reused only if it would verify now: signed by the current key
		// (same material) under the current issuer, audience and
		// algorithm (a Configure racing the issue below may have changed
		// them after the settings were read).
		if left >= ReuseMinRemaining && is.key.sameAs(r.current) && is.cache == st.cache && is.version == c.version {
			return Token{AccessToken: is.token, ExpiresIn: int(left / time.Second), Reused: true}, nil
		}
	}
	// iat is now rounded up to a whole second (JWT times are whole
	// seconds) and exp is exactly lifetime after it: exp - iat is the
	// lifetime, and expires_in (the lifetime) never outlasts the token. The
	// verifier accepts an iat less than a second ahead for this reason.
	iat := ceilSecond(now)
	exp := iat.Add(st.lifetime)
	jti, err := randomJTI(s.rand)
	if err != nil {
		return Token{}, err
	}
	claims := accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    st.issuer,
			Subject:   c.PartnerID,
			Audience:  jwt.ClaimStrings{st.audience},
			IssuedAt:  jwt.NewNumericDate(iat),
			ExpiresAt: jwt.NewNumericDate(exp),
			ID:        jti,
		},
		ClientID: c.ID,
		SV:       r.current.sv(c.version),
	}
	t := jwt.NewWithClaims(r.current.method, claims)
	t.Header["typ"] = TokenType
	t.Header["kid"] = r.current.KID
	signed, err := t.SignedString(r.current.sign)
	if err != nil {
		return Token{}, fmt.Errorf("signing token: %w", err)
	}
	s.reuse.Store(c.ID, &issued{token: signed, exp: exp, key: r.current, cache: st.cache, version: c.version})
	return Token{AccessToken: signed, ExpiresIn: int(st.lifetime / time.Second)}, nil
}

// ceilSecond rounds t up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if f := t.Truncate(time.Second); f.Before(t) {
		return f.Add(time.Second)
	}
	return t
}

func randomJTI(r io.Reader) (string, error) {
	b := make([]byte, 16)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
