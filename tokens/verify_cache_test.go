package tokens

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A seen token is found by VerifyHeader without the header's full scan,
// but only as the exact string that was verified: any other spelling of
// the header takes the full path and gets the full path's answer.
func TestVerifyHeaderFastPathOnlyForTheExactToken(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	if id, err := s.VerifyHeader("Bearer " + tok); err != nil || id.PartnerID != "partner-acme" {
		t.Fatalf("first verify: %v %+v", err, id)
	}
	for header, want := range map[string]Fault{
		"Bearer " + tok:          0, // cached: fast path
		"bearer   " + tok:        0, // scheme case and spaces, as ParseBearer allows
		"Bearer " + tok + " ":    FaultMissing,
		"Bearer " + tok + "\t":   FaultMissing,
		"Bearer " + tok + "x":    FaultInvalid,
		"Bearer " + tok + "=":    FaultInvalid,
		"Bearer " + tok[:20]:     FaultInvalid,
		"Bearer\t" + tok:         FaultMissing,
		"Basic " + tok:           FaultMissing,
		"Bearer " + tok + "\x00": FaultMissing,
	} {
		_, err := s.VerifyHeader(header)
		switch {
		case want == 0 && err != nil:
			t.Errorf("%q: refused (%s)", header, err.Reason)
		case want != 0 && (err == nil || err.Fault != want):
			t.Errorf("%q: got %v, want fault %d", header, err, want)
		}
	}
}

// The cache compares the whole token: an entry filed under a token's hash
// but holding another token is a miss.
func TestVerifyCacheComparesTheToken(t *testing.T) {
	c := newVerifyCache()
	v := &verified{partner: "p", exp: time.Now().Add(time.Hour)}
	c.put("token-a", v, time.Now())
	if got, ok := c.get("token-a"); !ok || got != v {
		t.Fatal("a cached token is not found")
	}
	sh, h := c.shard("token-b")
	sh.m.Store(h, &cacheEntry{token: "token-c", v: v})
	if _, ok := c.get("token-b"); ok {
		t.Fatal("another token's entry under the same hash was taken for this token")
	}
}

// The cache hashes a token's signature only: a token whose header or
// claims were changed keeps the genuine token's signature, and so its
// hash, but is never answered from the genuine token's entry, and does
// not push it out.
func TestATokenWithTheGenuineSignatureButOtherClaimsIsRefused(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	if _, err := s.VerifyHeader("Bearer " + tok); err != nil {
		t.Fatalf("the genuine token: %s", err.Reason)
	}
	payload := strings.IndexByte(tok, '.') + 1
	for _, forged := range []string{
		tok[:payload] + flipChar(tok[payload]) + tok[payload+1:], // the claims
		flipChar(tok[0]) + tok[1:],                               // the header
	} {
		if mustHash(s, forged) != mustHash(s, tok) {
			t.Fatal("the forged token does not share the genuine token's hash: the test proves nothing")
		}
		if id, err := s.VerifyHeader("Bearer " + forged); err == nil || err.Fault != FaultInvalid {
			t.Errorf("a token with the genuine signature and other content: identity %+v, error %v; want invalid", id, err)
		}
	}
	if _, err := s.VerifyHeader("Bearer " + tok); err != nil {
		t.Fatalf("the genuine token after the forged ones: %s", err.Reason)
	}
}

// mustHash is the verify cache's hash of tok.
func mustHash(s *Service, tok string) uint64 {
	_, h := s.settings.Load().cache.shard(tok)
	return h
}

// flipChar returns another base64url character than c.
func flipChar(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// A full shard makes room by dropping the tokens past their expiry (and
// leeway) first, then any, and never holds more than its cap.
func TestVerifyCacheCapped(t *testing.T) {
	c := newVerifyCache()
	now := time.Now()
	// Tokens that all land in shard 0.
	var toks []string
	for i := 0; len(toks) < verifyCachePerShard+2; i++ {
		tok := fmt.Sprint("token-", i)
		if sh, _ := c.shard(tok); sh == &c.shards[0] {
			toks = append(toks, tok)
		}
	}
	expired := &verified{exp: now.Add(-MaxLeeway - time.Minute)}
	fresh := &verified{exp: now.Add(time.Hour)}
	c.put(toks[0], expired, now)
	for _, tok := range toks[1:verifyCachePerShard] {
		c.put(tok, fresh, now)
	}
	sh := &c.shards[0]
	count := func() (n int) {
		sh.m.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := count(); n != verifyCachePerShard || sh.n != n {
		t.Fatalf("full shard holds %d entries, counts %d; want %d", n, sh.n, verifyCachePerShard)
	}
	// Full: the expired token goes, every fresh one stays.
	c.put(toks[verifyCachePerShard], fresh, now)
	if _, ok := c.get(toks[0]); ok {
		t.Error("the expired token was kept while a new one was added to a full shard")
	}
	for _, tok := range toks[1 : verifyCachePerShard+1] {
		if _, ok := c.get(tok); !ok {
			t.Fatalf("fresh token %s was dropped while an expired one could go", tok)
		}
	}
	// Full of fresh tokens: one goes, the new one is in, the cap holds.
	last := toks[verifyCachePerShard+1]
	c.put(last, fresh, now)
	if _, ok := c.get(last); !ok {
		t.Error("the newest token is not cached")
	}
	if n := count(); n != verifyCachePerShard || sh.n != n {
		t.Fatalf("after one more put the shard holds %d entries, counts %d; want %d", n, sh.n, verifyCachePerShard)
	}
	// Putting a cached token again replaces it without counting it twice.
	c.put(last, fresh, now)
	if n := count(); n != verifyCachePerShard || sh.n != n {
		t.Fatalf("a second put of one token: %d entries, counts %d", n, sh.n)
	}
}

// Go's base64 decoder skips line breaks, so a genuine token with one
// inserted would verify; it is refused before parsing, and so never cached
// under a second spelling.
func TestVerifyRefusesAnotherSpellingOfAGenuineToken(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	for _, odd := range []string{tok[:len(tok)-10] + "\n" + tok[len(tok)-10:], tok[:len(tok)-10] + "\r" + tok[len(tok)-10:]} {
		if _, err := s.Verify(odd); err == nil || err.Fault != FaultInvalid {
			t.Fatalf("Verify(%q) = %v, want invalid", odd, err)
		}
		if _, err := s.VerifyHeader("Bearer " + odd); err == nil || err.Fault != FaultMissing {
			t.Fatalf("VerifyHeader after Verify: %v, want a malformed header", err)
		}
	}
	if _, err := s.Verify(tok); err != nil {
		t.Fatalf("the genuine spelling: %v", err)
	}
}

// The fast path of VerifyHeader answers exactly what the full path
// answers, for any header; the fuzzed token goes through Verify first (the
// only way into the cache), so a token Verify wrongly caches shows up as a
// header the two paths disagree on.
func FuzzVerifyHeaderFastPathAgrees(f *testing.F) {
	s, _, _ := newTestService(f, Config{Partners: demoPartners()})
	tok := mustToken(f, s, "acme-client", acmeSecret).AccessToken
	for _, seed := range []struct{ token, prefix, suffix string }{
		{tok, "Bearer ", ""}, {tok, "bearer  ", ""}, {tok, "Bearer ", " "}, {tok, "Bearer ", "="},
		{tok, "Bearer\t", ""}, {tok, "BEARER ", ""}, {tok[:len(tok)-1], "Bearer ", ""},
		{tok[:len(tok)-10] + "\n" + tok[len(tok)-10:], "Bearer ", ""}, {"", "Bearer ", ""}, {"x", "Basic ", ""},
	} {
		f.Add(seed.token, seed.prefix, seed.suffix)
	}
	f.Fuzz(func(t *testing.T, token, prefix, suffix string) {
		_, _ = s.Verify(token)
		h := prefix + token + suffix
		id1, e1 := s.VerifyHeader(h)
		id2, e2 := s.verifyHeaderFull(h)
		if id1 != id2 || (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Fault != e2.Fault) {
			t.Fatalf("%q: fast path %+v %v, full path %+v %v", h, id1, e1, id2, e2)
		}
	})
}

// Before Configure, the fast path is skipped: both paths give the same
// answer (the handlers answer 503 before this).
func TestVerifyHeaderUnconfigured(t *testing.T) {
	db := openDB(t, t.TempDir())
	t.Cleanup(func() { db.Close() })
	s, err := Open(Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Bearer a b", "Bearer a\n", "Bearer abc", ""} {
		_, e1 := s.VerifyHeader(h)
		_, e2 := s.verifyHeaderFull(h)
		if e1 == nil || e2 == nil || e1.Fault != e2.Fault {
			t.Errorf("%q: fast path %v, full path %v", h, e1, e2)
		}
	}
}

// A configured key replaced in place (same kid, new material) invalidates
// what the old key signed: a token already verified (cached) is refused,
// and the token endpoint does not hand it out again. A reload that keeps
// the key keeps both.
func TestKeyReplacedUnderTheSameKID(t *testing.T) {
	oldKey, _ := GenerateKey(newFakeRand(), AlgEdDSA)
	newKey, _ := GenerateKey(rand.Reader, AlgEdDSA)
	cfg := func(secret string) Config {
		return Config{Keys: []KeyConfig{{KID: "k1", Alg: AlgEdDSA, Secret: secret}}, Partners: demoPartners()}
	}
	s, _, _ := newTestService(t, cfg(oldKey))
	tok := mustToken(t, s, "acme-client", acmeSecret).AccessToken
	if _, err := s.VerifyHeader("Bearer " + tok); err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(cfg(oldKey)); err != nil { // a reload, same key
		t.Fatal(err)
	}
	if _, err := s.VerifyHeader("Bearer " + tok); err != nil {
		t.Fatalf("a reload with the same key refused its token: %v", err)
	}
	if again := mustToken(t, s, "acme-client", acmeSecret); !again.Reused || again.AccessToken != tok {
		t.Fatal("a reload with the same key stopped the token's reuse")
	}
	if err := s.Configure(cfg(newKey)); err != nil { // the key replaced under its kid
		t.Fatal(err)
	}
	if _, err := s.VerifyHeader("Bearer " + tok); err == nil || err.Fault != FaultInvalid {
		t.Fatalf("a token of the replaced key: %v, want invalid", err)
	}
	fresh := mustToken(t, s, "acme-client", acmeSecret)
	if fresh.Reused || fresh.AccessToken == tok {
		t.Fatal("the token endpoint reused a token of the replaced key")
	}
	if _, err := s.VerifyHeader("Bearer " + fresh.AccessToken); err != nil {
		t.Fatalf("the new key's token: %v", err)
	}
}
