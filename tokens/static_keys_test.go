package tokens

import (
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
)

// keyless is a static partner without webhook_key.
func keyless(id string) StaticPartner {
	return StaticPartner{ID: id, Clients: []StaticClient{{ID: id + "-client", Secret: acmeSecret}}}
}

func webhookKey(t *testing.T, s *Service, id string) string {
	t.Helper()
	p, ok := s.Partner(id)
	if !ok {
		t.Fatalf("partner %s missing", id)
	}
	return string(p.WebhookKey)
}

func reopen(t *testing.T, s *Service, dir string, cfg Config) *Service {
	t.Helper()
	closeStore(s)
	db := openDB(t, dir)
	t.Cleanup(func() { db.Close() })
	s2, err := Open(Options{Store: db, Clock: s.clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	return s2
}

// A static partner without webhook_key gets a random 32-byte key, generated
// once, kept in the data store, stable across reloads and restarts.
func TestStaticPartnerWithoutWebhookKeyGetsOne(t *testing.T) {
	cfg := Config{Partners: []StaticPartner{keyless("partner-a"), keyless("partner-b")}}
	s, _, dir := newTestService(t, cfg)
	ka, kb := webhookKey(t, s, "partner-a"), webhookKey(t, s, "partner-b")
	for _, k := range []string{ka, kb} {
		if b, err := base64.RawURLEncoding.DecodeString(k); err != nil || len(b) != SecretBytes {
			t.Fatalf("generated key %q: %d bytes, %v", k, len(b), err)
		}
	}
	if ka == kb {
		t.Fatal("two partners share a generated key")
	}
	info, err := s.PartnerInfo("partner-a")
	if err != nil || !info.HasWebhookKey || info.WebhookKeySource != KeySourceGenerated || !info.Static {
		t.Fatalf("info %+v %v", info, err)
	}
	if strings.Contains(string(mustJSON(s.Partners())), ka) {
		t.Fatal("the listing shows a generated key")
	}
	// A reload keeps it.
	if err := s.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	if webhookKey(t, s, "partner-a") != ka {
		t.Fatal("reload changed the generated key")
	}
	// A restart keeps it.
	s = reopen(t, s, dir, cfg)
	if webhookKey(t, s, "partner-a") != ka || webhookKey(t, s, "partner-b") != kb {
		t.Fatal("restart changed the generated key")
	}
	// It is kept in the store.
	recs, err := s.store.StaticWebhookKeys()
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, r := range recs {
		kept = kept || r.Partner == "partner-a" && r.WebhookKey == ka
	}
	if !kept {
		t.Fatalf("the store keeps %+v, want partner-a's generated key among them", recs)
	}
}

// Rotation works for a static partner with a generated key: the answer is
// the new key, which then signs, and survives reloads and restarts.
func TestRotateStaticWebhookKey(t *testing.T) {
	cfg := Config{Partners: []StaticPartner{keyless("partner-a"), keyless("partner-b")}}
	s, _, dir := newTestService(t, cfg)
	before, other := webhookKey(t, s, "partner-a"), webhookKey(t, s, "partner-b")
	wk, err := s.RotateWebhookKey("partner-a")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := base64.RawURLEncoding.DecodeString(wk); err != nil || len(b) != SecretBytes || wk == before {
		t.Fatalf("rotated key %q (%d bytes, %v), before %q", wk, len(b), err, before)
	}
	if webhookKey(t, s, "partner-a") != wk || webhookKey(t, s, "partner-b") != other {
		t.Fatal("rotation did not take effect on the partner alone")
	}
	// Tokens of the partner's clients are untouched by a key rotation.
	tok := mustToken(t, s, "partner-a-client", acmeSecret)
	if err := s.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	if webhookKey(t, s, "partner-a") != wk {
		t.Fatal("reload undid the rotation")
	}
	s = reopen(t, s, dir, cfg)
	if webhookKey(t, s, "partner-a") != wk {
		t.Fatal("restart undid the rotation")
	}
	if _, err := s.Verify(tok.AccessToken); err != nil {
		t.Fatalf("token after key rotation and restart: %v", err)
	}
	if _, err := s.RotateWebhookKey("partner-nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown partner: %v", err)
	}
}

// An explicit webhook_key always wins over a kept key, and cannot be
// rotated through the API (ErrStatic, naming the Caddyfile); removing it
// from the configuration brings the kept key back.
func TestConfiguredWebhookKeyWins(t *testing.T) {
	keyed := keyless("partner-a")
	keyed.WebhookKey = "configured-webhook-key-0123456789abcdef"
	s, _, dir := newTestService(t, Config{Partners: []StaticPartner{keyless("partner-a")}})
	kept, err := s.RotateWebhookKey("partner-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(Config{Partners: []StaticPartner{keyed}}); err != nil {
		t.Fatal(err)
	}
	if got := webhookKey(t, s, "partner-a"); got != keyed.WebhookKey {
		t.Fatalf("configured key lost to the kept one: %q", got)
	}
	if info, _ := s.PartnerInfo("partner-a"); info.WebhookKeySource != KeySourceConfiguration {
		t.Fatalf("source %q", info.WebhookKeySource)
	}
	_, err = s.RotateWebhookKey("partner-a")
	if !errors.Is(err, ErrStatic) || !strings.Contains(err.Error(), "Caddyfile") {
		t.Fatalf("rotating a configured key: %v", err)
	}
	if webhookKey(t, s, "partner-a") != keyed.WebhookKey {
		t.Fatal("refused rotation changed the key")
	}
	s = reopen(t, s, dir, Config{Partners: []StaticPartner{keyed}})
	if webhookKey(t, s, "partner-a") != keyed.WebhookKey {
		t.Fatal("configured key lost on restart")
	}
	if err := s.Configure(Config{Partners: []StaticPartner{keyless("partner-a")}}); err != nil {
		t.Fatal(err)
	}
	if webhookKey(t, s, "partner-a") != kept {
		t.Fatal("the kept key did not come back when webhook_key was removed")
	}
}

// A configured webhook_key shorter than 32 bytes is refused with a clear
// message; 32 bytes and the demo's 43-character keys are accepted.
func TestConfiguredWebhookKeyLength(t *testing.T) {
	for _, n := range []int{1, 16, 31} {
		p := keyless("partner-a")
		p.WebhookKey = strings.Repeat("k", n)
		c := Config{Partners: []StaticPartner{p}}
		err := c.Normalize()
		if err == nil || !strings.Contains(err.Error(), "partner-a") || !strings.Contains(err.Error(), "at least 32") {
			t.Fatalf("%d-byte webhook_key: %v", n, err)
		}
	}
	p := keyless("partner-a")
	p.WebhookKey = strings.Repeat("k", 32)
	c := Config{Partners: append([]StaticPartner{p}, demoPartners()...)}
	if err := c.Normalize(); err != nil {
		t.Fatalf("32-byte and demo keys: %v", err)
	}
	// The webhook keys of the repository's demo Caddyfile pass.
	demo, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	var demoKeys int
	for _, line := range strings.Split(string(demo), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "webhook_key" {
			demoKeys++
			p.WebhookKey = f[1]
			c := Config{Partners: []StaticPartner{p}}
			if err := c.Normalize(); err != nil {
				t.Fatalf("demo key: %v", err)
			}
		}
	}
	if demoKeys == 0 {
		t.Fatal("no webhook_key in the demo Caddyfile")
	}
}
