package fulfilment

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func parseTokensBlock(t *testing.T, src string) (*TokensConfig, error) {
	t.Helper()
	c := new(TokensConfig)
	return c, c.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src))
}

func TestTokensCaddyfile(t *testing.T) {
	c, err := parseTokensBlock(t, `tokens {
		issuer https://gw.example
		audience aud-x
		lifetime 30m
		leeway 5s
		algorithm HS256
		signing_key k2 HS256 {env.K2}
		throttle {
			client 3 30s
			address 7 2m
		}
		partner p1 {
			consolidation
			webhook_key wk-0123456789abcdef0123456789abcdef
			client c1 secret-WO6UTy5e3jjBP9QaZRWomH8NAcr0WHD1-oZ8VvFmebc
			client c2 sha256:abcd
		}
		partner p2 {
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != "https://gw.example" || c.Audience != "aud-x" || time.Duration(c.Lifetime) != 30*time.Minute ||
		time.Duration(c.Leeway) != 5*time.Second || c.Algorithm != "HS256" {
		t.Fatalf("settings %+v", c)
	}
	if len(c.SigningKeys) != 1 || c.SigningKeys[0] != (SigningKeyConfig{KID: "k2", Alg: "HS256", Key: "{env.K2}"}) {
		t.Fatalf("keys %+v", c.SigningKeys)
	}
	if *c.Throttle != (ThrottleConfig{ClientFailures: 3, ClientWindow: caddy.Duration(30 * time.Second),
		AddressFailures: 7, AddressWindow: caddy.Duration(2 * time.Minute)}) {
		t.Fatalf("throttle %+v", c.Throttle)
	}
	if len(c.Partners) != 2 || !c.Partners[0].Consolidation || c.Partners[1].Consolidation ||
		c.Partners[0].Clients[1].SecretSHA256 != "abcd" || c.Partners[0].Clients[0].Secret == "" {
		t.Fatalf("partners %+v", c.Partners)
	}
	off, err := parseTokensBlock(t, "tokens {\n throttle off\n}")
	if err != nil || off.Throttle.ClientFailures != -1 || off.Throttle.AddressFailures != -1 {
		t.Fatalf("throttle off: %+v %v", off.Throttle, err)
	}
}

func TestTokensCaddyfileErrors(t *testing.T) {
	for _, src := range []string{
		"tokens arg",
		"tokens {\n bogus 1\n}",
		"tokens {\n lifetime\n}",
		"tokens {\n lifetime soon\n}",
		"tokens {\n signing_key k1 EdDSA\n}",
		"tokens {\n issuer a b\n}",
		"tokens {\n throttle {\n client 0 1m\n }\n}",
		"tokens {\n throttle {\n client 3 never\n }\n}",
		"tokens {\n throttle {\n wat 1\n }\n}",
		"tokens {\n throttle maybe\n}",
		"tokens {\n partner\n}",
		"tokens {\n partner p {\n client c\n }\n}",
		"tokens {\n partner p {\n consolidation yes\n }\n}",
		"tokens {\n partner p {\n colour red\n }\n}",
		// An option that takes one value is given once.
		"tokens {\n issuer a\n issuer b\n}",
		"tokens {\n lifetime 30m\n lifetime 1h\n}",
		"tokens {\n throttle off\n throttle off\n}",
	} {
		if _, err := parseTokensBlock(t, src); err == nil {
			t.Errorf("accepted: %q", src)
		}
	}
}
