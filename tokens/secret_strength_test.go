package tokens

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// Secrets people type are refused: runs, repeats, repeated parts and
// words estimate below MinSecretBits, whatever their length.
func TestSecretStrengthRefusesPatterns(t *testing.T) {
	for _, s := range []string{
		"DEMO-ONLY-acme-secret-0123456789abcdefghij",
		"acme-demo-secret-0123456789abcdefghijkl",
		"secret-0123456789abcdef0123456789abcdef",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"acacacacacacacacacacacacacacacacacacacacacacacac",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"P@ssw0rd!P@ssw0rd!P@ssw0rd!P@ssw0rd!",
		"correcthorsebatterystaplecorrecthorsebatterystaple",
		"thisisaverylongpassphrasewithoutanyspacesatall",
		strings.Repeat("Tr0ub4dor&3-", 4),
	} {
		if bits := SecretStrength(s); bits >= MinSecretBits {
			t.Errorf("SecretStrength(%q) = %d bits, want below %d", s, bits, MinSecretBits)
		}
	}
}

// Random secrets pass in every usual encoding, with a wide margin: no
// generated secret is ever refused.
func TestSecretStrengthAcceptsRandomSecrets(t *testing.T) {
	b := make([]byte, 32)
	for i := range 2000 {
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			base64.RawURLEncoding.EncodeToString(b),
			base64.StdEncoding.EncodeToString(b),
			hex.EncodeToString(b),
			strings.ToUpper(hex.EncodeToString(b)),
			"DEMO-ONLY-acme-secret-" + base64.RawURLEncoding.EncodeToString(b),
		} {
			if bits := SecretStrength(s); bits < MinSecretBits+24 {
				t.Fatalf("random secret %d %q estimates at %d bits, want at least %d", i, s, bits, MinSecretBits+24)
			}
		}
	}
}

func TestStaticSecretMustBeStrong(t *testing.T) {
	weak := Config{Partners: []StaticPartner{{ID: "p", Clients: []StaticClient{{ID: "c", Secret: "DEMO-ONLY-acme-secret-0123456789abcdefghij"}}}}}
	err := weak.Normalize()
	if err == nil || !strings.Contains(err.Error(), "too predictable") || !strings.Contains(err.Error(), "caddy fulfilment secret") {
		t.Fatalf("a patterned static secret: %v, want a refusal that says how to make a random one", err)
	}
	strong := Config{Partners: []StaticPartner{{ID: "p", Clients: []StaticClient{{ID: "c", Secret: acmeSecret}}}}}
	if err := strong.Normalize(); err != nil {
		t.Fatalf("a random static secret refused: %v", err)
	}
	// The digest form cannot be checked: it is accepted as it is.
	digest := Config{Partners: []StaticPartner{{ID: "p", Clients: []StaticClient{{ID: "c", SecretSHA256: hexSHA("password")}}}}}
	if err := digest.Normalize(); err != nil {
		t.Fatalf("a sha256 digest refused: %v", err)
	}
}
