package tokens

import (
	"bytes"
	"testing"
)

// Refresh reloads what another instance sharing the store wrote; these
// tests write to the store behind the service's back, as that instance
// would.

func TestRefreshBringsAPartnerWrittenBehindTheServicesBack(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	c := ClientRecord{ID: "other-client", Partner: "other", Hash: bytes.Repeat([]byte{1}, 32), Version: "v1-x",
		OpaqueVersion: true, Active: true, Created: clk.Now()}
	if err := s.store.CreatePartner(PartnerRecord{ID: "other", WebhookKey: "other-webhook-key-0123456789abcdef", Created: clk.Now()}, c); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Partner("other"); ok {
		t.Fatal("the service knew the partner before Refresh: the test writes nothing it could miss")
	}
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Partner("other"); !ok || string(p.WebhookKey) != "other-webhook-key-0123456789abcdef" {
		t.Fatalf("after Refresh, Partner(other) = %+v, %v; want the stored partner", p, ok)
	}
	if _, ok := s.Partner("partner-acme"); !ok {
		t.Fatal("Refresh dropped a static partner of the configuration")
	}
}

func TestRefreshKeepsConfiguredSigningKeys(t *testing.T) {
	k, err := GenerateKey(newFakeRand(), AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	s, clk, _ := newTestService(t, Config{Keys: []KeyConfig{{KID: "configured", Alg: AlgEdDSA, Secret: k}}, Partners: demoPartners()})
	gen, err := generateKeyMaterial(newFakeRand(), AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.ReplaceCurrentKey("", KeyRecord{KID: "generated", Alg: AlgEdDSA, Material: gen, Created: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if ks := s.Keys(); len(ks) != 1 || ks[0].KID != "configured" || !ks[0].Current {
		t.Fatalf("after Refresh the keys are %+v; want the configured key alone, current", ks)
	}
}

func TestRefreshBringsASigningKeyRotatedBehindTheServicesBack(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	old := mustToken(t, s, "acme-client", acmeSecret)
	prev := s.Keys()[0].KID
	mat, err := generateKeyMaterial(newFakeRand(), AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(1)
	if err := s.store.ReplaceCurrentKey(prev, KeyRecord{KID: "rotated", Alg: AlgEdDSA, Material: mat, Created: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if ks := s.Keys(); ks[0].KID != "rotated" || !ks[0].Current {
		t.Fatalf("after Refresh the current key is %+v; want the one stored meanwhile", ks[0])
	}
	if _, verr := s.Verify(old.AccessToken); verr != nil {
		t.Fatalf("a token of the retired key is refused after Refresh (it stays valid until it expires): %v", verr)
	}
}

// A rotation racing another instance's (whose key this service has not
// seen yet) is made on top of it: one current key in the store.
func TestRotationOnAStaleViewRotatesOnTopOfTheStoredKey(t *testing.T) {
	a, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	b, err := Open(Options{Store: a.store, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Configure(Config{Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	clk.Add(1)
	if _, err := a.RotateSigningKey(); err != nil {
		t.Fatal(err)
	}
	clk.Add(1)
	kb, err := b.RotateSigningKey()
	if err != nil {
		t.Fatalf("B's rotation after A's, unseen by B: %v", err)
	}
	recs, err := a.store.SigningKeys()
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := CurrentKey(recs, AlgEdDSA)
	live := 0
	for _, r := range recs {
		if r.Retired.IsZero() {
			live++
		}
	}
	if cur.KID != kb.KID || live != 1 || len(recs) != 3 {
		t.Fatalf("stored keys %d, %d not retired, current %s; want 3 keys (first, A's, B's), B's %s alone current", len(recs), live, cur.KID, kb.KID)
	}
}
