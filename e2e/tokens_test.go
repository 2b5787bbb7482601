package e2e

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The demo partners of the repository's Caddyfile (DEMO ONLY credentials).
const (
	demoAcmeID       = "acme-demo-client"
	demoAcmeSecret   = "DEMO-ONLY-acme-secret-rMNA5Jesv37EyWG9Lx1nWAWS0NKeAS-VlNywJ555Zgk"
	demoGlobexID     = "globex-demo-client"
	demoGlobexSecret = "DEMO-ONLY-globex-secret-4w1eIA478L377qc0j2QVEXs3zmP8NVzk1NhdiRVTfFc"
	// e2eSeed is the Base64 Ed25519 seed the key-sharing tests configure.
	e2eSeed = "ZTJlLXRlc3Qtc2VlZC0wMTIzNDU2Nzg5YWJjZGVmZ2g="
)

// oauthToken fetches a token with the real OAuth 2.0 client library.
func oauthToken(base, id, secret string) (*oauth2.Token, error) {
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: base + "/api/auth/token"}
	return cfg.Token(context.Background())
}

// tokensDemoBearer fetches a token for the demo partner partner-acme from
// the gateway at base and returns the Authorization header pair.
func tokensDemoBearer(t testing.TB, base string) []string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: demoAcmeID, ClientSecret: demoAcmeSecret, TokenURL: base + "/api/auth/token"}
	tok, err := cfg.Token(context.Background())
	if err != nil {
		t.Fatalf("token for the demo partner: %v", err)
	}
	return []string{"Authorization", "Bearer " + tok.AccessToken}
}

// The real OAuth 2.0 client library, with both client authentication
// styles, gets a token that opens v4 and v3; the simulator never sees the
// token, and sees the partner's id in X-Partner-Id whatever the partner sent.
func TestTokensOAuth2ClientBothStyles(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	for _, tc := range []struct {
		name, id, secret, partner string
		style                     oauth2.AuthStyle
	}{
		{"AuthStyleInHeader", demoAcmeID, demoAcmeSecret, "partner-acme", oauth2.AuthStyleInHeader},
		{"AuthStyleInParams", demoGlobexID, demoGlobexSecret, "partner-globex", oauth2.AuthStyleInParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g.clearLog(t)
			cfg := clientcredentials.Config{ClientID: tc.id, ClientSecret: tc.secret,
				TokenURL: g.Base + "/api/auth/token", AuthStyle: tc.style}
			tok, err := cfg.Token(context.Background())
			if err != nil {
				t.Fatalf("token: %v\n%s", err, g.Logs)
			}
			if left := time.Until(tok.Expiry); left < 3500*time.Second || left > 3601*time.Second {
				t.Fatalf("token expiry %v away, want about 1h", left)
			}
			client := cfg.Client(context.Background())
			for _, path := range []string{"/api/fulfilment/v4/shipments", "/api/fulfilment/v3/shipments", "/v4/products"} {
				req, _ := http.NewRequest(http.MethodGet, g.Base+path, nil)
				req.Header.Set("X-Partner-Id", "partner-spoofed")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s with the client's token: %d", path, resp.StatusCode)
				}
			}
			recs := g.proxied(t)
			if len(recs) != 3 {
				t.Fatalf("simulator got %d requests, want 3", len(recs))
			}
			for _, r := range recs {
				for name := range r.Headers {
					if strings.EqualFold(name, "Authorization") {
						t.Fatalf("the simulator saw Authorization on %s", r.Path)
					}
				}
				if got := r.Headers["X-Partner-Id"]; len(got) != 1 || got[0] != tc.partner {
					t.Fatalf("X-Partner-Id upstream %v, want [%s]", got, tc.partner)
				}
			}
		})
	}
	// Without a token: 401 with the Bearer challenge; nothing reaches the WMS.
	g.clearLog(t)
	status, hdr, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil)
	if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != `Bearer realm="fulfilment"` ||
		hdr.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("no token: %d %v %s", status, hdr, body)
	}
	status, hdr, _ = do(t, http.MethodGet, g.Base+"/api/fulfilment/v3/shipments", nil, "Authorization", "Bearer not.a.token")
	if status != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("bad token: %d %v", status, hdr)
	}
	if n := len(g.proxied(t)); n != 0 {
		t.Fatalf("%d refused requests reached the simulator", n)
	}
}

// keyedCaddyfile is the demo Caddyfile with a configured signing key (from
// the environment) and an access log.
func keyedCaddyfile(t testing.TB) string {
	cf := repoCaddyfile(t)
	for old, repl := range map[string]string{
		"\t\ttokens {\n":                      "\t\ttokens {\n\t\t\tsigning_key e2e-1 EdDSA {env.FULFILGATE_SIGNING_KEY}\n",
		"http://:{$FULFILGATE_PORT:8080} {\n": "http://:{$FULFILGATE_PORT:8080} {\n\tlog\n",
	} {
		if !strings.Contains(cf, old) {
			t.Fatalf("demo Caddyfile lacks %q", old)
		}
		cf = strings.Replace(cf, old, repl, 1)
	}
	return cf
}

func decodeClaims(t testing.TB, tok string) jwt.MapClaims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.MapClaims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// An expired token signed with the configured key answers 403; expired and
// tampered answers 401; the access log names the partner, never the token.
func TestTokensExpiredIs403WithConfiguredKey(t *testing.T) {
	t.Parallel()
	g := newRepoGateway(t, keyedCaddyfile(t))
	g.Env = append(g.Env, "FULFILGATE_SIGNING_KEY="+e2eSeed)
	g.run(t)
	bearer := tokensDemoBearer(t, g.Base)
	genuine := strings.TrimPrefix(bearer[1], "Bearer ")

	seed, _ := base64.StdEncoding.DecodeString(e2eSeed)
	key := ed25519.NewKeyFromSeed(seed)
	// The gateway signed with the configured key.
	if _, err := jwt.Parse(genuine, func(*jwt.Token) (any, error) { return key.Public(), nil },
		jwt.WithValidMethods([]string{"EdDSA"})); err != nil {
		t.Fatalf("token not signed by the configured key: %v", err)
	}
	claims := decodeClaims(t, genuine)
	claims["iat"] = time.Now().Add(-2 * time.Hour).Unix()
	claims["exp"] = time.Now().Add(-time.Hour).Unix()
	claims["jti"] = "e2e-expired"
	tk := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tk.Header["typ"], tk.Header["kid"] = "at+jwt", "e2e-1"
	expired, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	status, hdr, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil, "Authorization", "Bearer "+expired)
	if status != http.StatusForbidden || !strings.Contains(hdr.Get("WWW-Authenticate"), `error_description="The access token expired"`) {
		t.Fatalf("expired token: %d %v %s", status, hdr, body)
	}
	tampered := strings.Split(expired, ".")
	claims["sub"] = "partner-globex"
	cb, _ := json.Marshal(claims)
	tampered[1] = base64.RawURLEncoding.EncodeToString(cb)
	status, _, _ = do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil, "Authorization", "Bearer "+strings.Join(tampered, "."))
	if status != http.StatusUnauthorized {
		t.Fatalf("expired and tampered: %d, want 401", status)
	}
	status, h, _ := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil, bearer...)
	if status != http.StatusOK || h.Get("X-Request-Id") == "" {
		t.Fatalf("genuine token: %d, X-Request-Id %q", status, h.Get("X-Request-Id"))
	}
	// Caddy writes the access log entry after the response has gone out.
	logs := g.Logs.String()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs, `"partner_id":"partner-acme"`) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		logs = g.Logs.String()
	}
	if !strings.Contains(logs, `"partner_id":"partner-acme"`) {
		t.Fatalf("access log does not name the partner:\n%s", logs)
	}
	if want := `"request_id":"` + h.Get("X-Request-Id") + `"`; !strings.Contains(logs, want) {
		t.Fatalf("access log lacks %s:\n%s", want, logs)
	}
	for _, secret := range []string{genuine, expired, demoAcmeSecret, e2eSeed} {
		if strings.Contains(logs, secret) {
			t.Fatal("the gateway's log carries a token, secret or key")
		}
	}
}

// The token endpoint's statuses through the binary, and no secret in its log.
func TestTokensEndpointStatuses(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	ep := g.Base + "/api/auth/token"
	form := "application/x-www-form-urlencoded"
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	check := func(name string, wantStatus int, wantErr string, method string, body string, hdr ...string) http.Header {
		t.Helper()
		status, h, b := do(t, method, ep, strings.NewReader(body), hdr...)
		if status != wantStatus {
			t.Fatalf("%s: %d, want %d: %s", name, status, wantStatus, b)
		}
		if wantErr != "" {
			var e struct{ Error string }
			if json.Unmarshal(b, &e) != nil || e.Error != wantErr {
				t.Fatalf("%s: body %s, want error %s", name, b, wantErr)
			}
		}
		return h
	}
	h := check("basic", 200, "", "POST", "", "Authorization", basic(demoAcmeID, demoAcmeSecret))
	if h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" {
		t.Fatalf("success headers %v", h)
	}
	check("form", 200, "", "POST", "grant_type=client_credentials&client_id="+demoGlobexID+"&client_secret="+demoGlobexSecret, "Content-Type", form)
	if h := check("GET", 405, "invalid_request", "GET", ""); h.Get("Allow") != "POST" {
		t.Fatalf("405 Allow %q", h.Get("Allow"))
	}
	check("oversized", 413, "", "POST", "grant_type=client_credentials&x="+strings.Repeat("a", 9000), "Content-Type", form)
	check("both forms", 400, "invalid_request", "POST", "grant_type=client_credentials&client_id="+demoAcmeID+"&client_secret="+demoAcmeSecret,
		"Content-Type", form, "Authorization", basic(demoAcmeID, demoAcmeSecret))
	check("no grant", 400, "invalid_request", "POST", "client_id=a&client_secret=b", "Content-Type", form)
	check("wrong grant", 400, "unsupported_grant_type", "POST", "grant_type=password&client_id=a&client_secret=b", "Content-Type", form)
	wrong := "e2e-wrong-secret-never-logged-0123456789abcdef"
	for i := 0; i < 10; i++ {
		h := check("wrong secret", 401, "invalid_client", "POST", "", "Authorization", basic(demoAcmeID, wrong))
		if h.Get("WWW-Authenticate") != `Basic realm="fulfilment"` {
			t.Fatalf("401 challenge %q", h.Get("WWW-Authenticate"))
		}
	}
	h = check("throttled", 429, "invalid_client", "POST", "", "Authorization", basic(demoAcmeID, wrong))
	if h.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	check("right secret while throttled", 200, "", "POST", "", "Authorization", basic(demoAcmeID, demoAcmeSecret))
	if strings.Contains(g.Logs.String(), wrong) || strings.Contains(g.Logs.String(), demoAcmeSecret) {
		t.Fatal("the gateway's log carries a client secret")
	}
}
