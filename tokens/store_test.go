package tokens

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestDynamicPartnerLifecycle(t *testing.T) {
	s, clk, dir := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(np.ClientSecret) < 43 || len(np.WebhookKey) < 43 || np.ClientID == "" {
		t.Fatalf("weak credentials: %+v", np)
	}
	if _, err := s.CreatePartner("partner-initech", false); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := s.CreatePartner("partner-acme", false); !errors.Is(err, ErrExists) {
		t.Fatalf("create over static: %v", err)
	}
	if _, err := s.CreatePartner("../etc", false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad id: %v", err)
	}
	p, ok := s.Partner("partner-initech")
	if !ok || !p.Consolidation || string(p.WebhookKey) != np.WebhookKey {
		t.Fatalf("partner %+v", p)
	}
	tok := mustToken(t, s, np.ClientID, np.ClientSecret)

	// A second client; the first keeps working.
	c2, err := s.CreateClient("partner-initech", DefaultClientLimit)
	if err != nil {
		t.Fatal(err)
	}
	tok2 := mustToken(t, s, c2.ClientID, c2.ClientSecret)

	// Rotation: old secret refused, old token revoked (401), new secret works.
	rot, err := s.RotateSecret("partner-initech", np.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Authenticate(np.ClientID, np.ClientSecret); ok {
		t.Fatal("old secret still authenticates")
	}
	wantFault(t, s, "token of rotated secret", tok.AccessToken, FaultInvalid)
	fresh := mustToken(t, s, np.ClientID, rot.ClientSecret)
	if fresh.AccessToken == tok.AccessToken {
		t.Fatal("old token reused after rotation")
	}
	// Rotation and expiry together is still 401, never 403.
	clk.Add(2 * time.Hour)
	wantFault(t, s, "expired token of rotated secret", tok.AccessToken, FaultInvalid)
	clk.Add(-2 * time.Hour)

	// Disable: token refused, authentication refused; other client unaffected.
	if err := s.SetClientActive("partner-initech", np.ClientID, false); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token of disabled client", fresh.AccessToken, FaultInvalid)
	if _, ok := s.Authenticate(np.ClientID, rot.ClientSecret); ok {
		t.Fatal("disabled client authenticates")
	}
	if _, err := s.Verify(tok2.AccessToken); err != nil {
		t.Fatalf("other client's token: %v", err)
	}

	// Webhook key rotation.
	wk, err := s.RotateWebhookKey("partner-initech")
	if err != nil || wk == np.WebhookKey {
		t.Fatalf("webhook rotation: %v", err)
	}
	// Static partners and clients are read-only here.
	for _, err := range []error{
		s.SetClientActive("partner-acme", "acme-client", false),
		second(s.RotateSecret("partner-acme", "acme-client")),
		second(s.RotateWebhookKey("partner-acme")),
	} {
		if !errors.Is(err, ErrStatic) {
			t.Fatalf("static change: %v", err)
		}
	}
	// Client of another partner: not found.
	if _, err := s.RotateSecret("partner-initech", "acme-client"); !errors.Is(err, ErrStatic) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("cross-partner: %v", err)
	}
	if _, err := s.CreatePartner("partner-umbrella", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateSecret("partner-umbrella", c2.ClientID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("client of another partner: %v", err)
	}

	// The listing never shows a secret or key.
	list := s.Partners()
	dump := strings.Join(func() []string {
		var out []string
		for _, p := range list {
			out = append(out, string(mustJSON(p)))
		}
		return out
	}(), "\n")
	for _, secret := range []string{np.ClientSecret, rot.ClientSecret, c2.ClientSecret, wk, np.WebhookKey, acmeSecret} {
		if strings.Contains(dump, secret) {
			t.Fatal("listing shows a secret")
		}
	}
	if len(list) != 4 {
		t.Fatalf("list has %d partners", len(list))
	}

	// Everything survives a reopen of the same data dir.
	closeStore(s)
	db := openDB(t, dir)
	defer db.Close()
	s2, err := Open(Options{Store: db, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Configure(Config{Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Authenticate(c2.ClientID, c2.ClientSecret); !ok {
		t.Fatal("dynamic client lost on reopen")
	}
	if _, ok := s2.Authenticate(np.ClientID, rot.ClientSecret); ok {
		t.Fatal("disabled state lost on reopen")
	}
	if p, _ := s2.Partner("partner-initech"); string(p.WebhookKey) != wk {
		t.Fatal("webhook key lost on reopen")
	}
	// Tokens issued before the restart verify after it (same generated key).
	if _, err := s2.Verify(tok2.AccessToken); err != nil {
		t.Fatalf("token across restart: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestSigningKeyRotation(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	before := mustToken(t, s, "acme-client", acmeSecret)
	oldKID := currentKey(s).KID
	ki, err := s.RotateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	if ki.KID == oldKID || !ki.Current {
		t.Fatalf("rotation gave %+v", ki)
	}
	if _, err := s.Verify(before.AccessToken); err != nil {
		t.Fatalf("token of previous key refused: %v", err)
	}
	after := mustToken(t, s, "acme-client", acmeSecret)
	if after.AccessToken == before.AccessToken {
		t.Fatal("token of the previous key reused after rotation")
	}
	if len(s.Keys()) != 2 {
		t.Fatalf("keys: %+v", s.Keys())
	}
	// The previous key is dropped once every token it signed has expired;
	// its tokens were expired anyway (403 before, 401 once the key is gone).
	clk.Add(time.Hour + time.Second)
	wantFault(t, s, "old token after exp", before.AccessToken, FaultExpired)
	clk.Add(keyRetention)
	if _, err := s.RotateSigningKey(); err != nil {
		t.Fatal(err)
	}
	for _, k := range s.Keys() {
		if k.KID == oldKID {
			t.Fatal("retired key kept past retention")
		}
	}
	wantFault(t, s, "token of pruned key", before.AccessToken, FaultInvalid)

	// Configured keys are rotated in the configuration.
	cfgKey, _ := GenerateKey(s.rand, AlgEdDSA)
	s2, _, _ := newTestService(t, Config{Keys: []KeyConfig{{KID: "k1", Alg: AlgEdDSA, Secret: cfgKey}}})
	if _, err := s2.RotateSigningKey(); !errors.Is(err, ErrStatic) {
		t.Fatalf("rotating configured keys: %v", err)
	}
}

// A retired generated key verifies for keyRetention (the longest lifetime
// plus the largest leeway) after its retirement and then nothing, even if
// no start, reload or rotation has pruned it: a token freshly signed with
// it (a leaked key) is refused from then on.
func TestRetiredKeyStopsVerifyingOnTime(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	old := currentKey(s)
	if _, err := s.RotateSigningKey(); err != nil {
		t.Fatal(err)
	}
	fresh := func() string {
		now := clk.Now()
		c := goodClaims(s, now, now.Add(time.Hour))
		c["sv"] = old.sv(s.reg.Load().clients["acme-client"].version)
		return forge(t, jwt.SigningMethodEdDSA, old.sign, map[string]any{"typ": "at+jwt", "kid": old.KID}, c)
	}
	if _, err := s.Verify(fresh()); err != nil {
		t.Fatalf("the retired key stopped verifying before its retention ended: %v", err)
	}
	clk.Add(keyRetention)
	if _, err := s.Verify(fresh()); err != nil {
		t.Fatalf("the retired key stopped verifying at exactly its retention: %v", err)
	}
	clk.Add(time.Second)
	wantFault(t, s, "token of a retired key past its retention", fresh(), FaultInvalid)
}

func TestSharedConfiguredKeyAcrossInstances(t *testing.T) {
	rnd := newFakeRand()
	k1, _ := GenerateKey(rnd, AlgEdDSA)
	k0, _ := GenerateKey(rnd, AlgEdDSA)
	if k1 == k0 {
		t.Fatal("test keys are equal")
	}
	cfgA := Config{Keys: []KeyConfig{{KID: "2026-03", Alg: AlgEdDSA, Secret: k1}, {KID: "2026-02", Alg: AlgEdDSA, Secret: k0}}, Partners: demoPartners()}
	a, _, _ := newTestService(t, cfgA)
	b, _, _ := newTestService(t, cfgA)
	tok := mustToken(t, a, "globex-client", globexSecret)
	if _, err := b.Verify(tok.AccessToken); err != nil {
		t.Fatalf("instance B refuses instance A's token: %v", err)
	}
	// A token of the older configured key verifies on both.
	old, _, _ := newTestService(t, Config{Keys: []KeyConfig{{KID: "2026-02", Alg: AlgEdDSA, Secret: k0}}, Partners: demoPartners()})
	tokOld := mustToken(t, old, "globex-client", globexSecret)
	if _, err := b.Verify(tokOld.AccessToken); err != nil {
		t.Fatalf("token of the previous configured key refused: %v", err)
	}
}

func TestReconfigureKeepsStateAndRejectsBadConfig(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	if err := s.Configure(Config{Lifetime: time.Hour * 2}); err == nil {
		t.Fatal("bad lifetime accepted on reconfigure")
	}
	if _, err := s.Verify(tok.AccessToken); err != nil {
		t.Fatalf("failed reconfigure changed state: %v", err)
	}
	// Dropping a static client from configuration revokes its tokens.
	if err := s.Configure(Config{Partners: demoPartners()[1:]}); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token of removed static client", tok.AccessToken, FaultInvalid)
	// Changing a static secret revokes too.
	ps := demoPartners()
	if err := s.Configure(Config{Partners: ps}); err != nil {
		t.Fatal(err)
	}
	tok = mustToken(t, s, "acme-client", acmeSecret)
	ps[0].Clients[0].Secret = acmeSecret + "-v2"
	if err := s.Configure(Config{Partners: ps}); err != nil {
		t.Fatal(err)
	}
	wantFault(t, s, "token of changed static secret", tok.AccessToken, FaultInvalid)
}
