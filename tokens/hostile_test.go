package tokens

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// forge signs claims with method and key, with the given header values.
func forge(t *testing.T, method jwt.SigningMethod, key any, hdr map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	tk := jwt.NewWithClaims(method, claims)
	for k, v := range hdr {
		tk.Header[k] = v
	}
	s, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goodClaims are claims a genuine token for acme-client signed by the
// current key carries: issued a lifetime (1 h) before exp.
func goodClaims(s *Service, now time.Time, exp time.Time) jwt.MapClaims {
	c := s.reg.Load().clients["acme-client"]
	return jwt.MapClaims{"iss": DefaultIssuer, "aud": []string{DefaultAudience}, "sub": "partner-acme",
		"client_id": "acme-client", "sv": currentKey(s).sv(c.version), "iat": exp.Add(-time.Hour).Unix(), "exp": exp.Unix(), "jti": "j1"}
}

func currentKey(s *Service) *key { return s.ring.Load().current }

func wantFault(t *testing.T, s *Service, name, tok string, want Fault) {
	t.Helper()
	_, err := s.Verify(tok)
	if err == nil {
		t.Fatalf("%s: accepted", name)
	}
	if err.Fault != want {
		t.Fatalf("%s: fault %d (%s), want %d", name, err.Fault, err.Reason, want)
	}
}

func TestHostileTokens(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	now := clk.Now()
	k := currentKey(s)
	hdr := map[string]any{"typ": "at+jwt", "kid": k.KID}
	future := now.Add(time.Hour)
	past := now.Add(-time.Minute)

	// Sanity: the forging helper makes tokens the verifier accepts.
	if _, err := s.Verify(forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, goodClaims(s, now, future))); err != nil {
		t.Fatalf("control token refused: %v", err)
	}
	// And an expired genuine token is 403.
	wantFault(t, s, "expired genuine", forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, goodClaims(s, now, past)), FaultExpired)

	// alg: none, built by hand.
	hb, _ := json.Marshal(map[string]any{"alg": "none", "typ": "at+jwt", "kid": k.KID})
	cb, _ := json.Marshal(goodClaims(s, now, future))
	none := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb) + "."
	wantFault(t, s, "alg none", none, FaultInvalid)
	wantFault(t, s, "alg none expired", strings.Replace(none, base64.RawURLEncoding.EncodeToString(cb),
		base64.RawURLEncoding.EncodeToString(mustJSON(goodClaims(s, now, past))), 1), FaultInvalid)

	// HS256 signed with the Ed25519 public key (key confusion) and with a random key.
	pub := []byte(k.verify.(ed25519.PublicKey))
	wantFault(t, s, "HS256 with public key", forge(t, jwt.SigningMethodHS256, pub, hdr, goodClaims(s, now, future)), FaultInvalid)
	wantFault(t, s, "HS256 with public key, expired", forge(t, jwt.SigningMethodHS256, pub, hdr, goodClaims(s, now, past)), FaultInvalid)
	wantFault(t, s, "HS256 with random key", forge(t, jwt.SigningMethodHS256, []byte("0123456789abcdef0123456789abcdef"), hdr, goodClaims(s, now, future)), FaultInvalid)

	// An Ed25519 key not in the ring, with the ring's kid.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	wantFault(t, s, "foreign key", forge(t, jwt.SigningMethodEdDSA, other, hdr, goodClaims(s, now, future)), FaultInvalid)
	wantFault(t, s, "foreign key, expired", forge(t, jwt.SigningMethodEdDSA, other, hdr, goodClaims(s, now, past)), FaultInvalid)

	// kid games.
	for _, kid := range []any{"../../x", "unknown", "", 7, nil} {
		h := map[string]any{"typ": "at+jwt", "kid": kid}
		wantFault(t, s, "kid", forge(t, jwt.SigningMethodEdDSA, k.sign, h, goodClaims(s, now, future)), FaultInvalid)
		wantFault(t, s, "kid, expired", forge(t, jwt.SigningMethodEdDSA, k.sign, h, goodClaims(s, now, past)), FaultInvalid)
	}
	// typ must be at+jwt.
	wantFault(t, s, "typ JWT", forge(t, jwt.SigningMethodEdDSA, k.sign, map[string]any{"typ": "JWT", "kid": k.KID}, goodClaims(s, now, future)), FaultInvalid)

	// Wrong iss, aud; missing exp, sub, client_id; each alone and with expiry.
	mutate := func(f func(jwt.MapClaims)) func(time.Time) jwt.MapClaims {
		return func(exp time.Time) jwt.MapClaims { c := goodClaims(s, now, exp); f(c); return c }
	}
	cases := map[string]func(time.Time) jwt.MapClaims{
		"wrong iss":      mutate(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }),
		"wrong aud":      mutate(func(c jwt.MapClaims) { c["aud"] = []string{"other"} }),
		"no aud":         mutate(func(c jwt.MapClaims) { delete(c, "aud") }),
		"no sub":         mutate(func(c jwt.MapClaims) { delete(c, "sub") }),
		"other sub":      mutate(func(c jwt.MapClaims) { c["sub"] = "partner-globex" }),
		"unknown client": mutate(func(c jwt.MapClaims) { c["client_id"] = "ghost" }),
		"wrong sv":       mutate(func(c jwt.MapClaims) { c["sv"] = "old" }),
		"future iat":     mutate(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() }),
		"future nbf":     mutate(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }),
		"string exp":     mutate(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }),
	}
	for name, mk := range cases {
		wantFault(t, s, name, forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, mk(future)), FaultInvalid)
		wantFault(t, s, name+", expired", forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, mk(past)), FaultInvalid)
	}
	noExp := goodClaims(s, now, future)
	delete(noExp, "exp")
	wantFault(t, s, "missing exp", forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, noExp), FaultInvalid)

	// Tampered payload of a genuine token, fresh and expired.
	genuine := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	wantFault(t, s, "tampered", tamper(t, genuine, func(c map[string]any) { c["sub"] = "partner-globex" }), FaultInvalid)
	wantFault(t, s, "tampered exp", tamper(t, genuine, func(c map[string]any) { c["exp"] = float64(now.Add(48 * time.Hour).Unix()) }), FaultInvalid)
	expiredGenuine := forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, goodClaims(s, now, past))
	wantFault(t, s, "expired and tampered", tamper(t, expiredGenuine, func(c map[string]any) { c["jti"] = "other" }), FaultInvalid)
	sig := genuine[strings.LastIndexByte(genuine, '.')+1:]
	flipped := genuine[:len(genuine)-len(sig)] + flip(sig)
	wantFault(t, s, "tampered signature", flipped, FaultInvalid)

	// Junk.
	for _, j := range []string{"", "a", "a.b", "a.b.c", "..", strings.Repeat("A", MaxTokenLength+1), genuine + ".x"} {
		wantFault(t, s, "junk", j, FaultInvalid)
	}
	// The genuine token still works after all that (nothing poisoned the cache).
	if _, err := s.Verify(genuine); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func tamper(t *testing.T, tok string, f func(map[string]any)) string {
	t.Helper()
	p := strings.Split(tok, ".")
	var c map[string]any
	decodeSeg(t, p[1], &c)
	f(c)
	p[1] = base64.RawURLEncoding.EncodeToString(mustJSON(c))
	return strings.Join(p, ".")
}

func flip(sig string) string {
	b := []byte(sig)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestHS256Pinned(t *testing.T) {
	keyB64 := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef-hs"))
	s, clk, _ := newTestService(t, Config{Keys: []KeyConfig{{KID: "hs1", Alg: AlgHS256, Secret: keyB64}}, Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	if _, err := s.Verify(tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	hdr := map[string]any{"typ": "at+jwt", "kid": "hs1"}
	wantFault(t, s, "HS256 wrong key", forge(t, jwt.SigningMethodHS256, []byte("wrong-key-wrong-key-wrong-key-wrong"), hdr, goodClaims(s, now, now.Add(time.Hour))), FaultInvalid)
	wantFault(t, s, "HS384 right key", forge(t, jwt.SigningMethodHS384, []byte("0123456789abcdef0123456789abcdef-hs"), hdr, goodClaims(s, now, now.Add(time.Hour))), FaultInvalid)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	wantFault(t, s, "EdDSA under HS256 pin", forge(t, jwt.SigningMethodEdDSA, edKey, hdr, goodClaims(s, now, now.Add(time.Hour))), FaultInvalid)
	wantFault(t, s, "HS256 right key expired", forge(t, jwt.SigningMethodHS256, []byte("0123456789abcdef0123456789abcdef-hs"), hdr, goodClaims(s, now, now.Add(-time.Second))), FaultExpired)
}

// A token has one spelling. The last Base64url character of a signature
// (and of any segment whose length is not a multiple of 3 bytes) carries
// unused low bits; a lax decoder maps several spellings to the same bytes,
// so a "changed" token would verify. Each segment is re-spelled with its
// final character's unused bits set; every variant must be refused.
func TestTokenSpellingIsStrict(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	if _, err := s.Verify(tok); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	variants := 0
	for i, seg := range parts {
		spare := map[int]int{2: 4, 3: 2}[len(seg)%4] // unused bits of the last character
		if spare == 0 {
			continue
		}
		last := strings.IndexByte(alphabet, seg[len(seg)-1])
		alt := last ^ (1<<spare - 1) // same meaningful bits, the unused ones flipped
		respelled := append([]string(nil), parts...)
		respelled[i] = seg[:len(seg)-1] + string(alphabet[alt])
		lax, err := base64.RawURLEncoding.DecodeString(respelled[i])
		orig, _ := base64.RawURLEncoding.DecodeString(seg)
		if err != nil || string(lax) != string(orig) {
			t.Fatalf("segment %d: the re-spelling does not decode to the same bytes", i)
		}
		variants++
		wantFault(t, s, fmt.Sprintf("segment %d re-spelled", i), strings.Join(respelled, "."), FaultInvalid)
	}
	if variants == 0 {
		t.Fatal("no segment has unused bits; the test proves nothing")
	}
}

// A token whose exp - iat is longer than the configured lifetime (plus
// leeway) was not issued by the gateway, whoever signed it: 401, never
// accepted, however valid its signature (a leaked key cannot mint
// ten-year tokens).
func TestTokenLongerThanTheLifetimeIsRefused(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners(), Lifetime: 30 * time.Minute, Leeway: 10 * time.Second})
	now := clk.Now().Truncate(time.Second)
	k := currentKey(s)
	hdr := map[string]any{"typ": "at+jwt", "kid": k.KID}
	lived := func(d time.Duration) string {
		c := goodClaims(s, now, now.Add(d))
		c["iat"] = now.Unix()
		return forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, c)
	}
	if _, err := s.Verify(lived(30*time.Minute + 10*time.Second)); err != nil {
		t.Fatalf("a token living the lifetime plus the leeway was refused: %v", err)
	}
	wantFault(t, s, "lifetime + leeway + 1 s", lived(30*time.Minute+11*time.Second), FaultInvalid)
	wantFault(t, s, "ten years", lived(10*365*24*time.Hour), FaultInvalid)
	// Expired as well: still 401, the token was never genuine.
	c := goodClaims(s, now, now.Add(-time.Minute))
	c["iat"] = now.Add(-2 * time.Hour).Unix()
	wantFault(t, s, "too long and expired", forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, c), FaultInvalid)
}
