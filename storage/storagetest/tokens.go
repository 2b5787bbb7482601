package storagetest

import (
	"bytes"
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

var tokenBehaviours = []Behaviour{
	{"tokens/pepper is created once and kept", func(t *testing.T, b Backend) {
		first, err := b.Tokens.Pepper(gen("pepper-one-0123456789abcdef012345"))
		if err != nil {
			t.Fatal(err)
		}
		second, err := b.Tokens.Pepper(gen("pepper-two-0123456789abcdef012345"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) || string(first) != "pepper-one-0123456789abcdef012345" {
			t.Fatalf("Pepper gave %q then %q, want the first candidate both times", first, second)
		}
		again, err := b.Reopen(t).Tokens.Pepper(gen("pepper-three"))
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("after a restart Pepper gave %q (%v), want the stored %q", again, err, first)
		}
	}},
	{"tokens/a created partner and its client survive a restart", func(t *testing.T, b Backend) {
		p := tokens.PartnerRecord{ID: "P1", Consolidation: true, WebhookKey: "wk-0123456789abcdef0123456789abcdef", Created: t0}
		c := tokens.ClientRecord{ID: "p1-abc", Partner: "P1", Hash: bytes.Repeat([]byte{7}, 32), Version: "v1",
			OpaqueVersion: true, Active: true, Created: t0}
		if err := b.Tokens.CreatePartner(p, c); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		ps, err := r.Tokens.Partners()
		if err != nil || len(ps) != 1 || ps[0].ID != "P1" || !ps[0].Consolidation || ps[0].WebhookKey != p.WebhookKey || !ps[0].Created.Equal(t0) {
			t.Fatalf("Partners() = %+v, %v; want the created partner", ps, err)
		}
		cs, err := r.Tokens.Clients()
		if err != nil || len(cs) != 1 || cs[0].ID != "p1-abc" || cs[0].Partner != "P1" || !bytes.Equal(cs[0].Hash, c.Hash) ||
			cs[0].Version != "v1" || !cs[0].OpaqueVersion || !cs[0].Active {
			t.Fatalf("Clients() = %+v, %v; want the created client", cs, err)
		}
	}},
	{"tokens/PutPartner and PutClient replace", func(t *testing.T, b Backend) {
		p := tokens.PartnerRecord{ID: "P1", WebhookKey: "old", Created: t0}
		c := tokens.ClientRecord{ID: "c1", Partner: "P1", Hash: make([]byte, 32), Version: "v1", Active: true, Created: t0}
		if err := b.Tokens.CreatePartner(p, c); err != nil {
			t.Fatal(err)
		}
		p.WebhookKey, p.Disabled = "new", true
		c.Version, c.Active = "v2", false
		if err := b.Tokens.PutPartner(p); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.PutClient(c); err != nil {
			t.Fatal(err)
		}
		ps, _ := b.Tokens.Partners()
		cs, _ := b.Tokens.Clients()
		if len(ps) != 1 || ps[0].WebhookKey != "new" || !ps[0].Disabled {
			t.Fatalf("Partners() = %+v, want the one partner replaced", ps)
		}
		if len(cs) != 1 || cs[0].Version != "v2" || cs[0].Active {
			t.Fatalf("Clients() = %+v, want the one client replaced", cs)
		}
	}},
	{"tokens/DeletePartner deletes the partner and the named clients only", func(t *testing.T, b Backend) {
		for _, id := range []string{"P1", "P2"} {
			c := tokens.ClientRecord{ID: id + "-c", Partner: id, Hash: make([]byte, 32), Active: true, Created: t0}
			if err := b.Tokens.CreatePartner(tokens.PartnerRecord{ID: id, Created: t0}, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Tokens.DeletePartner("P1", []string{"P1-c", "never-existed"}); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		ps, _ := r.Tokens.Partners()
		cs, _ := r.Tokens.Clients()
		if len(ps) != 1 || ps[0].ID != "P2" || len(cs) != 1 || cs[0].ID != "P2-c" {
			t.Fatalf("after deleting P1: partners %+v, clients %+v; want only P2 and its client", ps, cs)
		}
	}},
	{"tokens/signing keys are stored and deleted in one update", func(t *testing.T, b Backend) {
		k1 := tokens.KeyRecord{KID: "k1", Alg: "EdDSA", Material: []byte("seed-1"), Created: t0}
		k2 := tokens.KeyRecord{KID: "k2", Alg: "EdDSA", Material: []byte("seed-2"), Created: t0}
		if err := b.Tokens.UpdateSigningKeys([]tokens.KeyRecord{k1, k2}, nil); err != nil {
			t.Fatal(err)
		}
		k2.Retired = t0.Add(1)
		if err := b.Tokens.UpdateSigningKeys([]tokens.KeyRecord{k2}, []string{"k1"}); err != nil {
			t.Fatal(err)
		}
		ks, err := b.Reopen(t).Tokens.SigningKeys()
		if err != nil || len(ks) != 1 || ks[0].KID != "k2" || !ks[0].Retired.Equal(t0.Add(1)) || string(ks[0].Material) != "seed-2" {
			t.Fatalf("SigningKeys() = %+v, %v; want k2 retired, k1 deleted", ks, err)
		}
	}},
	{"tokens/static partners' generated webhook keys are kept", func(t *testing.T, b Backend) {
		recs := []tokens.StaticKeyRecord{{Partner: "S1", WebhookKey: "a", Created: t0}, {Partner: "S2", WebhookKey: "b", Created: t0}}
		if err := b.Tokens.PutStaticWebhookKeys(recs); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.PutStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "S1", WebhookKey: "c", Created: t0, Rotated: t0}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.Reopen(t).Tokens.StaticWebhookKeys()
		keys := map[string]string{}
		for _, r := range got {
			keys[r.Partner] = r.WebhookKey
		}
		if err != nil || len(got) != 2 || keys["S1"] != "c" || keys["S2"] != "b" {
			t.Fatalf("StaticWebhookKeys() = %+v, %v; want S1 rotated to c and S2 kept", got, err)
		}
	}},
}
