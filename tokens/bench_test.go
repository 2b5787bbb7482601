package tokens

import (
	"testing"
)

// Benchmarks of the hot paths; run with
//
//	go test -run '^$' -bench . -benchmem ./tokens/

// BenchmarkVerify: a token already seen (the common case: clients reuse a
// token for up to an hour).
func BenchmarkVerify(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	tok := mustToken(b, s, "acme-client", acmeSecret).AccessToken
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyHeader: the Bearer guard's call, the whole Authorization
// header of a token already seen.
func BenchmarkVerifyHeader(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	header := "Bearer " + mustToken(b, s, "acme-client", acmeSecret).AccessToken
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.VerifyHeader(header); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyHeaderParallel: the same from every core at once, as
// under load: all of them on one token, so any lock or shared counter on
// its path shows here and not above.
func BenchmarkVerifyHeaderParallel(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	header := "Bearer " + mustToken(b, s, "acme-client", acmeSecret).AccessToken
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.VerifyHeader(header); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkVerifyFirstSight: the signature and claims check of a token not
// yet seen (Ed25519).
func BenchmarkVerifyFirstSight(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	tok := mustToken(b, s, "acme-client", acmeSecret).AccessToken
	st := s.settings.Load()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.verifySignature(st, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue: authenticate and sign a new token each time (reuse
// defeated by clearing the reuse cache).
func BenchmarkIssue(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	b.ReportAllocs()
	for b.Loop() {
		s.reuse.Clear()
		mustToken(b, s, "acme-client", acmeSecret)
	}
}

// BenchmarkIssueReuse: authenticate and hand out the current token.
func BenchmarkIssueReuse(b *testing.B) {
	s, _, _ := newTestService(b, Config{Partners: demoPartners()})
	mustToken(b, s, "acme-client", acmeSecret)
	b.ReportAllocs()
	for b.Loop() {
		if !mustToken(b, s, "acme-client", acmeSecret).Reused {
			b.Fatal("not reused")
		}
	}
}
