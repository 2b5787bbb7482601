package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// keysByKID reads the stored signing keys by kid.
func keysByKID(t *testing.T, b Backend) map[string]tokens.KeyRecord {
	t.Helper()
	ks, err := b.Tokens.SigningKeys()
	if err != nil {
		t.Fatalf("SigningKeys: %v", err)
	}
	out := map[string]tokens.KeyRecord{}
	for _, k := range ks {
		out[k.KID] = k
	}
	return out
}

var keyBehaviours = []Behaviour{
	{"tokens/ReplaceCurrentKey creates the first key only where there is none", func(t *testing.T, b Backend) {
		k1 := tokens.KeyRecord{KID: "k1", Alg: tokens.AlgEdDSA, Material: []byte("seed-1"), Created: t0}
		k2 := tokens.KeyRecord{KID: "k2", Alg: tokens.AlgEdDSA, Material: []byte("seed-2"), Created: t0}
		if err := b.Tokens.ReplaceCurrentKey("", k1); err != nil {
			t.Fatalf("the first key on an empty store: %v", err)
		}
		if err := b.Tokens.ReplaceCurrentKey("", k2); !errors.Is(err, tokens.ErrKeyChanged) {
			t.Fatalf("a second \"first\" key: got %v, want ErrKeyChanged (another instance created one)", err)
		}
		ks := keysByKID(t, b.Reopen(t))
		if len(ks) != 1 || !ks["k1"].Retired.IsZero() {
			t.Fatalf("stored keys %+v; want k1 alone, current", ks)
		}
	}},
	{"tokens/ReplaceCurrentKey retires the current key it names, and only then", func(t *testing.T, b Backend) {
		k1 := tokens.KeyRecord{KID: "k1", Alg: tokens.AlgEdDSA, Material: []byte("seed-1"), Created: t0}
		hs := tokens.KeyRecord{KID: "hs", Alg: tokens.AlgHS256, Material: []byte("hs-key-0123456789abcdef0123456789"), Created: t0}
		for _, k := range []tokens.KeyRecord{k1, hs} {
			if err := b.Tokens.ReplaceCurrentKey("", k); err != nil {
				t.Fatal(err)
			}
		}
		k3 := tokens.KeyRecord{KID: "k3", Alg: tokens.AlgEdDSA, Material: []byte("seed-3"), Created: t0.Add(time.Minute)}
		if err := b.Tokens.ReplaceCurrentKey("k1", k3); err != nil {
			t.Fatalf("rotating k1 to k3: %v", err)
		}
		k4 := tokens.KeyRecord{KID: "k4", Alg: tokens.AlgEdDSA, Material: []byte("seed-4"), Created: t0.Add(2 * time.Minute)}
		if err := b.Tokens.ReplaceCurrentKey("k1", k4); !errors.Is(err, tokens.ErrKeyChanged) {
			t.Fatalf("rotating k1 again after k3 replaced it: got %v, want ErrKeyChanged", err)
		}
		ks := keysByKID(t, b.Reopen(t))
		switch {
		case len(ks) != 3:
			t.Fatalf("stored keys %+v; want k1, k3 and hs (k4 refused)", ks)
		case !ks["k1"].Retired.Equal(k3.Created):
			t.Fatalf("k1 retired at %v, want k3's creation %v", ks["k1"].Retired, k3.Created)
		case !ks["k3"].Retired.IsZero() || string(ks["k3"].Material) != "seed-3":
			t.Fatalf("k3 = %+v, want current with its material", ks["k3"])
		case !ks["hs"].Retired.IsZero():
			t.Fatalf("the HS256 key was retired by an EdDSA rotation: %+v", ks["hs"])
		}
	}},
	{"tokens/AddStaticWebhookKeys keeps a static partner's stored key", func(t *testing.T, b Backend) {
		if err := b.Tokens.PutStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "S1", WebhookKey: "first", Created: t0}}); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.AddStaticWebhookKeys([]tokens.StaticKeyRecord{{Partner: "S1", WebhookKey: "second", Created: t0},
			{Partner: "S2", WebhookKey: "new", Created: t0}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.Reopen(t).Tokens.StaticWebhookKeys()
		keys := map[string]string{}
		for _, r := range got {
			keys[r.Partner] = r.WebhookKey
		}
		if err != nil || len(got) != 2 || keys["S1"] != "first" || keys["S2"] != "new" {
			t.Fatalf("StaticWebhookKeys() = %+v, %v; want S1's first key kept and S2's added", got, err)
		}
	}},
}
