package tokens

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestIssueShapeRFC9068(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	if tok.ExpiresIn != 3600 || tok.Reused {
		t.Fatalf("new token: expires_in %d reused %v, want 3600 false", tok.ExpiresIn, tok.Reused)
	}
	parts := strings.Split(tok.AccessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %d parts", len(parts))
	}
	var hdr map[string]any
	var claims map[string]any
	decodeSeg(t, parts[0], &hdr)
	decodeSeg(t, parts[1], &claims)
	if hdr["typ"] != "at+jwt" || hdr["alg"] != "EdDSA" || hdr["kid"] == "" {
		t.Fatalf("header %v", hdr)
	}
	for _, k := range []string{"iss", "aud", "sub", "client_id", "iat", "exp", "jti"} {
		if _, ok := claims[k]; !ok {
			t.Errorf("claim %s missing: %v", k, claims)
		}
	}
	if claims["sub"] != "partner-acme" || claims["client_id"] != "acme-client" || claims["iss"] != DefaultIssuer {
		t.Fatalf("claims %v", claims)
	}
	exp := time.Unix(int64(claims["exp"].(float64)), 0)
	if left := exp.Sub(clk.Now()); left < time.Hour || left > time.Hour+time.Second {
		t.Fatalf("exp is %v after now", left)
	}
	id, verr := s.Verify(tok.AccessToken)
	if verr != nil || id.PartnerID != "partner-acme" || id.ClientID != "acme-client" {
		t.Fatalf("verify: %+v %v", id, verr)
	}
}

func decodeSeg(t *testing.T, seg string, v any) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func TestReuseWhileAtLeast1800Left(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	first := mustToken(t, s, "acme-client", acmeSecret)
	clk.Add(10 * time.Minute)
	again := mustToken(t, s, "acme-client", acmeSecret)
	if again.AccessToken != first.AccessToken || !again.Reused {
		t.Fatal("token not reused 10 minutes later")
	}
	if again.ExpiresIn < 2999 || again.ExpiresIn > 3000 {
		t.Fatalf("reused expires_in %d, want about 3000", again.ExpiresIn)
	}
	clk.Add(20 * time.Minute) // 30 min in: at most 1800 s left
	third := mustToken(t, s, "acme-client", acmeSecret)
	if third.ExpiresIn < 1800 || third.ExpiresIn > 3600 {
		t.Fatalf("expires_in %d out of [1800,3600]", third.ExpiresIn)
	}
	clk.Add(time.Second)
	fourth := mustToken(t, s, "acme-client", acmeSecret)
	if fourth.AccessToken == first.AccessToken || fourth.Reused || fourth.ExpiresIn != 3600 {
		t.Fatalf("with < 1800 s left a new token must be issued: reused=%v expires_in=%d", fourth.Reused, fourth.ExpiresIn)
	}
	// Another client of another partner never gets acme's token.
	g := mustToken(t, s, "globex-client", globexSecret)
	if g.AccessToken == fourth.AccessToken {
		t.Fatal("token shared across clients")
	}
}

func TestExpiresInAlwaysInRange(t *testing.T) {
	for _, lt := range []time.Duration{1800 * time.Second, 2700 * time.Second, 3600 * time.Second} {
		s, clk, _ := newTestService(t, Config{Lifetime: lt, Partners: demoPartners()})
		for i := 0; i < 200; i++ {
			tok := mustToken(t, s, "acme-client", acmeSecret)
			if tok.ExpiresIn < 1800 || tok.ExpiresIn > 3600 || tok.ExpiresIn > int(lt/time.Second) {
				t.Fatalf("lifetime %v step %d: expires_in %d", lt, i, tok.ExpiresIn)
			}
			if _, err := s.Verify(tok.AccessToken); err != nil {
				t.Fatalf("lifetime %v step %d: %v", lt, i, err)
			}
			clk.Add(37*time.Second + 300*time.Millisecond)
		}
	}
}

func TestExpiryAndLeeway(t *testing.T) {
	s, clk, _ := newTestService(t, Config{Partners: demoPartners()})
	tok := mustToken(t, s, "acme-client", acmeSecret)
	clk.Add(time.Hour - time.Second)
	if _, err := s.Verify(tok.AccessToken); err != nil {
		t.Fatalf("token refused before exp: %v", err)
	}
	clk.Add(2 * time.Second)
	_, err := s.Verify(tok.AccessToken)
	if err == nil || err.Fault != FaultExpired {
		t.Fatalf("after exp: %v, want expired", err)
	}

	s2, clk2, _ := newTestService(t, Config{Leeway: 30 * time.Second, Partners: demoPartners()})
	tok2 := mustToken(t, s2, "acme-client", acmeSecret)
	clk2.Add(time.Hour + 20*time.Second)
	if _, err := s2.Verify(tok2.AccessToken); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	clk2.Add(15 * time.Second)
	if _, err := s2.Verify(tok2.AccessToken); err == nil || err.Fault != FaultExpired {
		t.Fatalf("past leeway: %v", err)
	}
}

func TestConfigRanges(t *testing.T) {
	bad := []Config{
		{Lifetime: 1799 * time.Second},
		{Lifetime: 3601 * time.Second},
		{Lifetime: 2 * time.Hour},
		{Lifetime: 1800*time.Second + time.Millisecond},
		{Leeway: 61 * time.Second},
		{Leeway: -time.Second},
		{Algorithm: "RS256"},
		{Algorithm: "none"},
		{Partners: []StaticPartner{{ID: "p", Clients: []StaticClient{{ID: "c", Secret: "short"}}}}},
		{Partners: []StaticPartner{{ID: "../x"}}},
		{Partners: []StaticPartner{{ID: "p"}, {ID: "p"}}},
		{Keys: []KeyConfig{{KID: "k1", Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(make([]byte, 16))}}},
		{Algorithm: "EdDSA", Keys: []KeyConfig{{KID: "k1", Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(make([]byte, 32))}}},
	}
	for i, c := range bad {
		if err := c.Normalize(); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
	good := Config{Lifetime: 1800 * time.Second, Leeway: 60 * time.Second}
	if err := good.Normalize(); err != nil {
		t.Fatal(err)
	}
	var def Config
	if err := def.Normalize(); err != nil || def.Lifetime != time.Hour || def.Algorithm != AlgEdDSA || def.Leeway != 0 {
		t.Fatalf("defaults: %+v %v", def, err)
	}
	if err := (&Config{Lifetime: 2 * time.Hour}).Normalize(); !strings.Contains(err.Error(), "1800") {
		t.Fatalf("message does not name the range: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	if _, ok := s.Authenticate("acme-client", acmeSecret); !ok {
		t.Fatal("right secret refused")
	}
	for _, c := range [][2]string{
		{"acme-client", globexSecret},
		{"acme-client", acmeSecret + "x"},
		{"acme-client", ""},
		{"nobody", acmeSecret},
		{"", ""},
	} {
		if _, ok := s.Authenticate(c[0], c[1]); ok {
			t.Fatalf("%q accepted", c[0])
		}
	}
	// A static client configured by digest only.
	s2, _, _ := newTestService(t, Config{Partners: []StaticPartner{{ID: "p1",
		Clients: []StaticClient{{ID: "c1", SecretSHA256: hexSHA(acmeSecret)}}}}})
	if _, ok := s2.Authenticate("c1", acmeSecret); !ok {
		t.Fatal("digest-configured client refused")
	}
}

// An unknown client id costs the same work as a wrong secret, so answers do
// not reveal which client ids exist: the same hash computations and constant-time comparisons, in the
// same order, counted by the hasher (no timing measured).
func TestAuthenticateSameWork(t *testing.T) {
	s, _, _ := newTestService(t, Config{Partners: demoPartners()})
	np, err := s.CreatePartner("partner-initech", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetClientActive("partner-initech", np.ClientID, false); err != nil {
		t.Fatal(err)
	}
	var trace []string
	s.hasher.note = func(w string) { trace = append(trace, w) }
	run := func(id, secret string) ([]string, bool) {
		trace = nil
		_, ok := s.Authenticate(id, secret)
		return trace, ok
	}
	want := []string{workDigest, workHash, workCompare, workCompare}
	for _, secret := range []string{acmeSecret + "x", "", "short", strings.Repeat("s", 4096), globexSecret} {
		wrong, ok1 := run("acme-client", secret)
		unknown, ok2 := run("no-such-client", secret)
		empty, ok3 := run("", secret)
		disabled, ok4 := run(np.ClientID, secret)
		if ok1 || ok2 || ok3 || ok4 {
			t.Fatalf("secret %.10q authenticated", secret)
		}
		for name, got := range map[string][]string{"wrong secret": wrong, "unknown id": unknown, "empty id": empty, "disabled client": disabled} {
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("secret %.10q, %s: work %v, want %v", secret, name, got, want)
			}
		}
	}
	// A disabled client with its right secret, and a right secret: the same.
	for _, c := range [][2]string{{np.ClientID, np.ClientSecret}, {"acme-client", acmeSecret}} {
		got, _ := run(c[0], c[1])
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: work %v, want %v", c[0], got, want)
		}
	}
}

// Configured tells an opened service from one that can serve: the throttle,
// the key ring and the registry are there once it says true.
func TestConfigured(t *testing.T) {
	db := openDB(t, t.TempDir())
	t.Cleanup(func() { db.Close() })
	s, err := Open(Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if s.Configured() {
		t.Fatal("configured before Configure")
	}
	if err := s.Configure(Config{Partners: demoPartners()}); err != nil {
		t.Fatal(err)
	}
	if !s.Configured() || s.Throttle() == nil || len(s.Keys()) == 0 || len(s.Partners()) == 0 {
		t.Fatalf("after Configure: configured %v, throttle %v, keys %v, partners %v",
			s.Configured(), s.Throttle(), s.Keys(), s.Partners())
	}
}
