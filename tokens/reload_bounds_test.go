package tokens

import (
	"testing"
	"time"
)

// A reload that shrinks the leeway applies at once to a token the verify
// cache holds, although the cache worked out its time bounds before.
func TestAReloadedLeewayAppliesToACachedToken(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Leeway: 30 * time.Second, Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	if _, err := s.VerifyHeader("Bearer " + tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(Config{Leeway: 0, Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour + 20*time.Second)
	if _, err := s.VerifyHeader("Bearer " + tok.AccessToken); err == nil || err.Fault != FaultExpired {
		t.Fatalf("20s after exp with leeway 0 after reload: err %v, want expired", err)
	}
}

// A reload that shrinks the lifetime refuses the cached tokens longer than
// it.
func TestAReloadedLifetimeAppliesToACachedToken(t *testing.T) {
	s, _, _ := newTestService(t, Config{Lifetime: time.Hour, Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	if _, err := s.VerifyHeader("Bearer " + tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(Config{Lifetime: 30 * time.Minute, Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyHeader("Bearer " + tok.AccessToken); err == nil {
		t.Fatalf("1h token accepted after lifetime reloaded to 30m")
	}
}
