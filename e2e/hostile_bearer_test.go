package e2e

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

var b64url = base64.RawURLEncoding

// jwtParts decodes a token's header and claims.
func jwtParts(t testing.TB, tok string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token with %d parts", len(parts))
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := b64url.DecodeString(parts[i])
		if err != nil || json.Unmarshal(b, dst) != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
	}
	return header, claims
}

// forge builds header.claims.signature with sign over the signing input.
func forge(t testing.TB, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	h, err1 := json.Marshal(header)
	c, err2 := json.Marshal(claims)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	input := b64url.EncodeToString(h) + "." + b64url.EncodeToString(c)
	return input + "." + b64url.EncodeToString(sign([]byte(input)))
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func hs256(key []byte) func([]byte) []byte {
	return func(in []byte) []byte {
		m := hmac.New(sha256.New, key)
		m.Write(in)
		return m.Sum(nil)
	}
}

// gatewayPublicKey reads the current Ed25519 public key from the admin API.
func (g *repoGateway) gatewayPublicKey(t testing.TB) []byte {
	t.Helper()
	status, _, body := do(t, http.MethodGet, "http://"+g.Admin+"/fulfilment/keys", nil)
	var keys []struct {
		Current   bool   `json:"current"`
		PublicKey string `json:"public_key"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &keys) != nil {
		var wrapped struct {
			Keys *[]struct {
				Current   bool   `json:"current"`
				PublicKey string `json:"public_key"`
			} `json:"keys"`
		}
		wrapped.Keys = &keys
		if json.Unmarshal(body, &wrapped) != nil {
			t.Fatalf("admin keys: %d %s", status, body)
		}
	}
	for _, k := range keys {
		if k.Current {
			pub, err := base64.StdEncoding.DecodeString(k.PublicKey)
			if err == nil && len(pub) == ed25519.PublicKeySize {
				return pub
			}
		}
	}
	t.Fatalf("no current Ed25519 key in %s", body)
	return nil
}

// Forged, foreign and malformed tokens are 401 with the invalid_token
// challenge and a problem body, and none reaches the WMS.
func TestHostileBearerForgedTokens(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	other := startRepoGateway(t, repoCaddyfile(t)) // its own data dir, so its own key
	real := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	foreign := hostileToken(t, other.Base, demoClientID, demoClientSecret)
	hdr, claims := jwtParts(t, real)
	pub := g.gatewayPublicKey(t)
	_, attacker, _ := ed25519.GenerateKey(rand.Reader)
	attackerPub := attacker.Public().(ed25519.PublicKey)
	edSign := func(in []byte) []byte { return ed25519.Sign(attacker, in) }
	none := func([]byte) []byte { return nil }
	acmeClaims := with(claims, "sub", demoPartner, "client_id", demoClientID)
	parts := strings.Split(real, ".")

	g.clearLog(t)
	for _, tc := range []struct{ what, token string }{
		{"alg none", forge(t, with(hdr, "alg", "none"), claims, none)},
		{"alg None", forge(t, with(hdr, "alg", "None"), acmeClaims, none)},
		{"alg none without kid", forge(t, map[string]any{"alg": "none", "typ": "at+jwt"}, claims, none)},
		{"HS256 keyed with the Ed25519 public key", forge(t, with(hdr, "alg", "HS256"), acmeClaims, hs256(pub))},
		{"HS256 keyed with the Base64 public key", forge(t, with(hdr, "alg", "HS256"), acmeClaims, hs256([]byte(base64.StdEncoding.EncodeToString(pub))))},
		{"HS256 keyed with the empty key", forge(t, with(hdr, "alg", "HS256"), acmeClaims, hs256(nil))},
		{"attacker's Ed25519 key, real kid", forge(t, hdr, acmeClaims, edSign)},
		{"kid ../../etc/passwd", forge(t, with(hdr, "kid", "../../etc/passwd"), claims, edSign)},
		{"kid /dev/null", forge(t, with(hdr, "kid", "/dev/null"), claims, hs256(nil))},
		{"kid as a number", forge(t, with(hdr, "kid", 1), claims, edSign)},
		{"kid SQL", forge(t, with(hdr, "kid", "' OR '1'='1"), claims, edSign)},
		{"embedded jwk", forge(t, with(hdr, "jwk", map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64url.EncodeToString(attackerPub)}), acmeClaims, edSign)},
		{"jku to the attacker", forge(t, with(hdr, "jku", "http://127.0.0.1:9/jwks.json", "kid", "attacker"), acmeClaims, edSign)},
		{"real signature, claims changed to acme", b64url.EncodeToString(mustJSON(t, hdr)) + "." + b64url.EncodeToString(mustJSON(t, acmeClaims)) + "." + parts[2]},
		{"real signature, exp extended", parts[0] + "." + b64url.EncodeToString(mustJSON(t, with(claims, "exp", 4102444800))) + "." + parts[2]},
		{"signature stripped", parts[0] + "." + parts[1] + "."},
		{"signature flipped", parts[0] + "." + parts[1] + "." + flipLast(parts[2])},
		{"four parts", real + ".x"},
		{"JWE-shaped", parts[0] + ".." + parts[1] + ".." + parts[2]},
		{"another gateway's token", foreign},
		{"the client secret", globexClientSecret},
		{"empty claims", forge(t, hdr, map[string]any{}, edSign)},
		{"garbage", "not-a-token"},
		{"non-ASCII", "ünïcödé.tøkén.sïg"},
	} {
		status, h, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/products", nil, "Authorization", "Bearer "+tc.token)
		isProblem(t, tc.what, status, h, body, http.StatusUnauthorized)
		if wa := h.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer ") || !strings.Contains(wa, `realm="fulfilment"`) {
			t.Errorf("%s: WWW-Authenticate %q", tc.what, wa)
		}
	}
	g.nothingProxied(t, "forged token")
	// The other gateway's own token still works there, and ours here.
	other.stillHealthy(t, foreign)
	g.stillHealthy(t, real)
	g.notInLogs(t, real, foreign)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func flipLast(s string) string {
	if strings.HasSuffix(s, "A") {
		return s[:len(s)-1] + "B"
	}
	return s[:len(s)-1] + "A"
}

// Header games with the Authorization header: duplicates, sizes, scheme
// spellings and tokens outside the header (RFC 6750 §2.2/§2.3 forms are
// not supported: the query string and a form body are never accepted).
func TestHostileBearerHeaderGames(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	tok := hostileToken(t, g.Base, globexClientID, globexClientSecret)
	host := hostport(g.Base)
	path := "/api/fulfilment/v4/products"
	get := func(auth ...string) rawResponse {
		var b strings.Builder
		b.WriteString("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n")
		for _, a := range auth {
			b.WriteString("Authorization: " + a + "\r\n")
		}
		b.WriteString("\r\n")
		return rawHTTP(t, host, b.String())
	}

	// RFC 9110 §11.1: the auth scheme is case-insensitive; RFC 6750 §2.1:
	// "Bearer" 1*SP b64token. Trailing whitespace is not part of a field value.
	for _, auth := range []string{"Bearer " + tok, "bearer " + tok, "BEARER " + tok, "bEaReR " + tok, "Bearer " + tok + " ", "Bearer  " + tok} {
		if r := get(auth); r.Status != http.StatusOK {
			t.Errorf("%.12q...: %d %s, want 200", auth, r.Status, r.Body)
		}
	}
	g.clearLog(t)
	for _, tc := range []struct {
		what string
		auth []string
	}{
		{"no header", nil},
		{"two Authorization headers, both valid", []string{"Bearer " + tok, "Bearer " + tok}},
		{"two Authorization headers, junk first", []string{"Bearer junk", "Bearer " + tok}},
		{"two Authorization headers, junk second", []string{"Bearer " + tok, "Basic eDp5"}},
		{"comma-joined", []string{"Bearer " + tok + ", Bearer " + tok}},
		{"tab separator", []string{"Bearer\t" + tok}},
		{"no separator", []string{"Bearer" + tok}},
		{"extra word", []string{"Bearer " + tok + " extra"}},
		{"empty token", []string{"Bearer "}},
		{"scheme only", []string{"Bearer"}},
		{"Basic credentials on a resource", []string{basicAuth(globexClientID, globexClientSecret)}},
		{"64 KiB token", []string{"Bearer " + strings.Repeat("A", 64<<10)}},
	} {
		r := get(tc.auth...)
		if tc.what == "64 KiB token" && r.Status == http.StatusRequestHeaderFieldsTooLarge {
			continue
		}
		if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") ||
			!strings.Contains(r.Header.Get("WWW-Authenticate"), `Bearer realm="fulfilment"`) {
			t.Errorf("%s: %d %q %q %s, want 401 problem+json with a Bearer challenge", tc.what, r.Status,
				r.Header.Get("Content-Type"), r.Header.Get("WWW-Authenticate"), r.Body)
		}
	}
	// 2 MiB of header: Caddy refuses it before any handler; never a 5xx.
	if r := get("Bearer " + strings.Repeat("A", 2<<20)); r.Status/100 == 5 || r.Status == http.StatusOK {
		t.Errorf("2 MiB Authorization: %d", r.Status)
	}
	// Tokens outside the Authorization header.
	for _, tc := range []struct{ what, method, target, body string }{
		{"query access_token", http.MethodGet, path + "?access_token=" + tok, ""},
		{"form access_token", http.MethodPost, "/api/fulfilment/v4/subscriptions", "access_token=" + tok},
		{"cookie", http.MethodGet, path, ""},
	} {
		h := []string{"Content-Type", "application/x-www-form-urlencoded"}
		if tc.what == "cookie" {
			h = append(h, "Cookie", "access_token="+tok)
		}
		var body *strings.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		} else {
			body = strings.NewReader("")
		}
		status, rh, b := do(t, tc.method, g.Base+tc.target, body, h...)
		isProblem(t, tc.what, status, rh, b, http.StatusUnauthorized)
	}
	g.nothingProxied(t, "bad Authorization")
	g.stillHealthy(t, tok)
	g.notInLogs(t, tok)
}
