package tokens

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// svOf returns the "sv" claim of a token.
func svOf(t *testing.T, tok string) string {
	t.Helper()
	var c struct {
		SV string `json:"sv"`
	}
	decodeSeg(t, strings.Split(tok, ".")[1], &c)
	if c.SV == "" {
		t.Fatal("token without sv")
	}
	return c.SV
}

// The sv claim is keyed: from a leaked token, nobody without the gateway's
// key can test a guessed secret offline. It is neither the unkeyed digest
// older versions sent nor any plain hash of the secret, and two gateways
// with different keys give the same client different values.
func TestSVIsKeyed(t *testing.T) {
	a, _, _ := newTestService(t, Config{Partners: demoPartners()})
	b, _, _ := newTestService(t, Config{Partners: demoPartners()})
	sv := svOf(t, mustToken(t, a, "acme-client", acmeSecret).AccessToken)
	d := secretDigest(acmeSecret)
	dd := sha256.Sum256(d[:])
	for name, guess := range map[string]string{
		"the unkeyed secret version":    legacySecretVersion(d),
		"the secret's SHA-256":          base64.RawURLEncoding.EncodeToString(d[:])[:len(sv)],
		"SHA-256 of the secret's hash":  base64.RawURLEncoding.EncodeToString(dd[:])[:len(sv)],
		"another gateway's sv for it":   svOf(t, mustToken(t, b, "acme-client", acmeSecret).AccessToken),
		"the secret's SHA-256, raw hex": string(d[:len(sv)]),
	} {
		if sv == guess {
			t.Errorf("sv equals %s: computable from a guessed secret without the gateway's key", name)
		}
	}
}

// Instances sharing the configured keys and static clients (not a data
// store) agree on sv, so each accepts the other's tokens; a new secret in
// the configuration revokes the old secret's tokens on each.
func TestSVAgreesAcrossInstancesSharingKeys(t *testing.T) {
	k, _ := GenerateKey(newFakeRand(), AlgEdDSA)
	cfg := Config{Keys: []KeyConfig{{KID: "k1", Alg: AlgEdDSA, Secret: k}}, Partners: demoPartners()}
	a, _, _ := newTestService(t, cfg)
	b, _, _ := newTestService(t, cfg)
	tok := mustToken(t, a, "acme-client", acmeSecret).AccessToken
	if svOf(t, tok) != svOf(t, mustToken(t, b, "acme-client", acmeSecret).AccessToken) {
		t.Fatal("two instances with the same keys and configuration give one client different sv")
	}
	if _, err := b.Verify(tok); err != nil {
		t.Fatalf("instance B refuses instance A's token: %v", err)
	}
	ps := demoPartners()
	ps[0].Clients[0].Secret = "Xd1S6Tju0vw1QSLzlz9p_oRWsGN250ibmYbvUXZB_vY"
	if err := b.Configure(Config{Keys: cfg.Keys, Partners: ps}); err != nil {
		t.Fatal(err)
	}
	wantFault(t, b, "token of the old static secret", tok, FaultInvalid)
}

// A disabled client enabled again does not get its old tokens back: they
// were issued before the disable and stay refused (401). A token fetched
// after enabling works.
func TestReenabledClientDoesNotRevivePreviousTokens(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", false)
	if err != nil {
		t.Fatal(err)
	}
	before := mustToken(t, s, np.ClientID, np.ClientSecret)
	if err := s.SetClientActive("partner-initech", np.ClientID, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClientActive("partner-initech", np.ClientID, true); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token issued before the disable, after enabling again", before.AccessToken, FaultInvalid)
	after := mustToken(t, s, np.ClientID, np.ClientSecret)
	if after.AccessToken == before.AccessToken {
		t.Fatal("the token of before the disable was handed out again")
	}
	if _, err := s.Verify(after.AccessToken); err != nil {
		t.Fatalf("a token fetched after enabling again: %v", err)
	}
}

// The client version kept in the data store is opaque: not derived from
// the secret, so the store offers no digest of it either.
func TestStoredClientVersionIsOpaque(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", false)
	if err != nil {
		t.Fatal(err)
	}
	var rec ClientRecord
	clients, err := s.store.Clients()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		if c.ID == np.ClientID {
			rec = c
		}
	}
	if !rec.OpaqueVersion || rec.Version == legacySecretVersion(secretDigest(np.ClientSecret)) {
		t.Fatalf("stored client record %+v: want an opaque version, not one derived from the secret", rec)
	}
}

// A token issued before the upgrade that keyed sv carries the unkeyed
// value; it stays valid until it expires, so a restart does not refuse
// every partner's current token. The gateway never accepts the unkeyed
// value in a token issued after it started.
func TestLegacySVOnlyForTokensIssuedBeforeStart(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	k := currentKey(s)
	hdr := map[string]any{"typ": "at+jwt", "kid": k.KID}
	legacy := func(iat time.Time) string {
		c := goodClaims(s, iat, iat.Add(time.Hour))
		c["sv"] = legacySecretVersion(secretDigest(acmeSecret))
		return forge(t, jwt.SigningMethodEdDSA, k.sign, hdr, c)
	}
	started := s.opened.Truncate(time.Second)
	if _, err := s.Verify(legacy(started.Add(-10 * time.Minute))); err != nil {
		t.Fatalf("a token with the unkeyed sv issued before the start: %v", err)
	}
	clk.Add(2 * time.Second)
	wantFault(t, s, "unkeyed sv issued after the start", legacy(started.Add(time.Second)), FaultInvalid)
}
