package e2e

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// oauthError asserts an RFC 6749 §5.2 error answer: status, JSON with the
// error code, and Cache-Control: no-store.
func oauthError(t testing.TB, what string, status int, h http.Header, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if status != wantStatus || json.Unmarshal(body, &e) != nil || e.Error != wantCode {
		t.Errorf("%s: %d %s, want %d %s", what, status, body, wantStatus, wantCode)
		return
	}
	if !strings.HasPrefix(h.Get("Content-Type"), "application/json") || h.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Content-Type %q Cache-Control %q", what, h.Get("Content-Type"), h.Get("Cache-Control"))
	}
	if strings.Contains(string(body), "access_token") {
		t.Errorf("%s: an error answer carries a token: %s", what, body)
	}
}

// Malformed and ambiguous requests to the token endpoint are refused with
// the documented RFC 6749 errors, and none of them issues a token. (Fewer
// than ten failures per client id, so the throttle stays out of the way.)
func TestHostileTokenEndpointRefusals(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	ep := g.Base + "/api/auth/token"
	form := "application/x-www-form-urlencoded"
	goodForm := "grant_type=client_credentials&client_id=" + globexClientID + "&client_secret=" + globexClientSecret
	post := func(body string, header ...string) (int, http.Header, []byte) {
		return do(t, http.MethodPost, ep, strings.NewReader(body), header...)
	}

	// Oversize bodies, with and without Content-Length.
	big := goodForm + "&pad=" + strings.Repeat("a", 9<<10)
	if status, _, body := post(big, "Content-Type", form); status != http.StatusRequestEntityTooLarge {
		t.Errorf("9 KiB form: %d %s, want 413", status, body)
	}
	host := hostport(g.Base)
	chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big)
	r := rawHTTP(t, host, "POST /api/auth/token HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: "+form+
		"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+chunk)
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("9 KiB chunked form: %d %s, want 413", r.Status, r.Body)
	}

	for _, tc := range []struct {
		what, body string
		header     []string
		status     int
		code       string
	}{
		{"Basic and form credentials together", goodForm, []string{"Content-Type", form, "Authorization", basicAuth(demoClientID, demoClientSecret)}, 400, "invalid_request"},
		{"Basic and the same client in the form", "grant_type=client_credentials&client_id=" + demoClientID + "&client_secret=" + demoClientSecret,
			[]string{"Content-Type", form, "Authorization", basicAuth(demoClientID, demoClientSecret)}, 400, "invalid_request"},
		{"client_id twice", goodForm + "&client_id=" + demoClientID, []string{"Content-Type", form}, 400, "invalid_request"},
		{"client_secret twice", goodForm + "&client_secret=" + globexClientSecret, []string{"Content-Type", form}, 400, "invalid_request"},
		{"grant_type twice", goodForm + "&grant_type=client_credentials", []string{"Content-Type", form}, 400, "invalid_request"},
		{"grant_type=password", "grant_type=password&username=a&password=b&client_id=" + globexClientID + "&client_secret=" + globexClientSecret, []string{"Content-Type", form}, 400, "unsupported_grant_type"},
		{"form without grant_type", "client_id=" + globexClientID + "&client_secret=" + globexClientSecret, []string{"Content-Type", form}, 400, "invalid_request"},
		{"JSON body", `{"grant_type":"client_credentials","client_id":"` + globexClientID + `","client_secret":"` + globexClientSecret + `"}`, []string{"Content-Type", "application/json"}, 400, "invalid_request"},
		{"form body with a JSON content type", goodForm, []string{"Content-Type", "application/json"}, 400, "invalid_request"},
		{"Basic with a wrong grant_type", "grant_type=password", []string{"Content-Type", form, "Authorization", basicAuth(demoClientID, demoClientSecret)}, 400, "unsupported_grant_type"},
		{"invalid base64 Basic", "", []string{"Authorization", "Basic !!!not*base64$$$"}, 401, "invalid_client"},
		{"Basic without a colon", "", []string{"Authorization", "Basic " + "YWNtZS1kZW1vLWNsaWVudA=="}, 401, "invalid_client"},
		{"Basic with an empty secret", "", []string{"Authorization", basicAuth(demoClientID, "")}, 401, "invalid_client"},
		{"Basic with a NUL in the id", "", []string{"Authorization", basicAuth(demoClientID+"\x00", demoClientSecret)}, 401, "invalid_client"},
		{"Bearer instead of Basic", "", []string{"Authorization", "Bearer " + demoClientSecret}, 401, "invalid_client"},
	} {
		status, h, body := post(tc.body, tc.header...)
		oauthError(t, tc.what, status, h, body, tc.status, tc.code)
		if tc.status == 401 && tc.header[0] == "Authorization" && strings.HasPrefix(tc.header[1], "Basic") &&
			h.Get("WWW-Authenticate") != `Basic realm="fulfilment"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.what, h.Get("WWW-Authenticate"))
		}
	}

	// RFC 6749 §2.3.1: credentials MUST NOT come in the request URI.
	q := url.Values{"grant_type": {"client_credentials"}, "client_id": {globexClientID}, "client_secret": {globexClientSecret}}
	if status, _, body := post("", "Content-Type", form); status == http.StatusOK {
		t.Errorf("no credentials at all: 200 %s", body)
	}
	status, _, body := do(t, http.MethodPost, ep+"?"+q.Encode(), strings.NewReader(""), "Content-Type", form)
	if status == http.StatusOK || strings.Contains(string(body), "access_token") {
		t.Errorf("credentials in the query string: %d %s, want a refusal", status, body)
	}

	// Other methods: 405 with Allow: POST, and no token even with good credentials.
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch} {
		status, h, body := do(t, m, ep+"?"+q.Encode(), nil, "Authorization", basicAuth(demoClientID, demoClientSecret))
		if status != http.StatusMethodNotAllowed || h.Get("Allow") != "POST" || strings.Contains(string(body), "access_token") {
			t.Errorf("%s: %d Allow %q %s, want 405 Allow POST", m, status, h.Get("Allow"), body)
		}
	}

	// The good form still works, and no secret reached the logs.
	if status, _, body := post(goodForm, "Content-Type", form); status != http.StatusOK {
		t.Errorf("good form after the attacks: %d %s", status, body)
	}
	g.stillHealthy(t, hostileToken(t, g.Base, demoClientID, demoClientSecret))
	g.notInLogs(t, demoClientSecret, globexClientSecret)
}

// Slowloris-ish: many connections send a token request's headers and part
// of the body, then stall. The gateway keeps answering everybody else.
func TestHostileTokenSlowBody(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	host := hostport(g.Base)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 50 {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /api/auth/token HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
			"Content-Length: 4000\r\n\r\ngrant_type=client_cre", host)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for range 5 {
		req, _ := http.NewRequest(http.MethodPost, g.Base+"/api/auth/token", nil)
		req.Header.Set("Authorization", basicAuth(demoClientID, demoClientSecret))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("a normal token request while 50 bodies stall: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a normal token request while 50 bodies stall: %d", resp.StatusCode)
		}
	}
	// A stalled request that finally ends gets its answer; it did not poison anything.
	fmt.Fprintf(conns[0], "dentials&client_id=%s&client_secret=%s", globexClientID, globexClientSecret)
	// Content-Length is 4000: the body is still short, so the server must not answer 200
	// for the shorter body; closing our write side ends it.
	if tc, ok := conns[0].(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	n, _ := conns[0].Read(buf)
	if strings.Contains(string(buf[:n]), "200 OK") {
		t.Errorf("a truncated body was accepted: %q", buf[:n])
	}
	g.stillHealthy(t, hostileToken(t, g.Base, globexClientID, globexClientSecret))
}

// Brute force: wrong secrets for one client id end in 429 with Retry-After
// and the standard invalid_client body. Rotating X-Forwarded-For and
// friends does not escape the per-address throttle. The throttle refuses
// only failures: the right secret (fetched by the real OAuth 2.0 client)
// still gets its token, for the attacked client and for everyone behind
// the throttled address. No secret, right or wrong, reaches the logs.
func TestHostileTokenBruteForce(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	ep := g.Base + "/api/auth/token"
	var wrong []string
	throttled := -1
	for i := range 15 {
		secret := fmt.Sprintf("guess-%02d-0123456789abcdefghijklmnopqrstu", i)
		wrong = append(wrong, secret)
		status, h, body := do(t, http.MethodPost, ep, nil, "Authorization", basicAuth(demoClientID, secret))
		if status == http.StatusTooManyRequests {
			throttled = i
			oauthError(t, "throttled guess", status, h, body, 429, "invalid_client")
			if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 || s > 60 {
				t.Errorf("Retry-After %q, want 1..60 seconds", h.Get("Retry-After"))
			}
			break
		}
		oauthError(t, "wrong secret", status, h, body, 401, "invalid_client")
	}
	if throttled != 10 {
		t.Fatalf("the 429 came after %d failures, want after the default 10", throttled)
	}
	// The attacked client is not locked out.
	if _, err := oauthToken(g.Base, demoClientID, demoClientSecret); err != nil {
		t.Errorf("the right secret while its client id is throttled: %v, want a token", err)
	}
	// Spray unknown client ids with spoofed forwarding headers: the address
	// throttle (default 30 failures) still applies to the real peer address.
	sprayed := -1
	for i := range 40 {
		ip := fmt.Sprintf("10.%d.%d.%d", i, i, i+1)
		status, _, _ := do(t, http.MethodPost, ep, nil, "Authorization", basicAuth(fmt.Sprintf("ghost-%d", i), "x"),
			"X-Forwarded-For", ip, "X-Real-Ip", ip, "Forwarded", "for="+ip, "True-Client-Ip", ip)
		if status == http.StatusTooManyRequests {
			sprayed = i
			break
		}
		if status != http.StatusUnauthorized {
			t.Fatalf("ghost %d: %d", i, status)
		}
	}
	if sprayed < 0 || sprayed > 25 {
		t.Errorf("the address throttle answered 429 at spray request %d, want within the 30-failure budget (11 used)", sprayed)
	}
	status, h, body := do(t, http.MethodPost, ep, nil, "Authorization", basicAuth(globexClientID, "wrong"), "X-Forwarded-For", "10.200.0.1")
	oauthError(t, "a wrong globex secret from the throttled address", status, h, body, 429, "invalid_client")
	if h.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Everyone else behind that address (a NAT, a load balancer) still
	// gets tokens.
	if _, err := oauthToken(g.Base, globexClientID, globexClientSecret); err != nil {
		t.Errorf("globex's right secret from the throttled address: %v, want a token", err)
	}
	g.noPanic(t)
	g.notInLogs(t, append(wrong, demoClientSecret, globexClientSecret)...)
}

// Two Authorization headers on the token endpoint answer 400
// invalid_request, as the Bearer guard refuses them: no token is issued on
// whichever header a proxy or the gateway happens to read first.
func TestHostileTokenTwoAuthorizationHeaders(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	for _, order := range [][2]string{{demoClientID, globexClientID}, {globexClientID, demoClientID}} {
		secrets := map[string]string{demoClientID: demoClientSecret, globexClientID: globexClientSecret}
		req, err := http.NewRequest(http.MethodPost, g.Base+"/api/auth/token", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Add("Authorization", basicAuth(order[0], secrets[order[0]]))
		req.Header.Add("Authorization", basicAuth(order[1], secrets[order[1]]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		oauthError(t, "two Authorization headers, "+order[0]+" first", resp.StatusCode, resp.Header, body, 400, "invalid_request")
	}
	g.noPanic(t)
}

// A token signed with the gateway's own (here: configured, so leakable)
// key but living longer than the gateway issues tokens for is refused
// with 401: a leaked key cannot mint a ten-year token. The same claims
// with the configured lifetime are accepted, so the refusal is about the
// lifetime alone.
func TestHostileTokenLongerThanTheLifetime(t *testing.T) {
	t.Parallel()
	g := newRepoGateway(t, keyedCaddyfile(t))
	g.Env = append(g.Env, "FULFILGATE_SIGNING_KEY="+e2eSeed)
	g.run(t)
	genuine := strings.TrimPrefix(tokensDemoBearer(t, g.Base)[1], "Bearer ")
	seed, _ := base64.StdEncoding.DecodeString(e2eSeed)
	key := ed25519.NewKeyFromSeed(seed)
	sign := func(lifetime time.Duration) string {
		claims := decodeClaims(t, genuine)
		iat := time.Now().Add(-time.Minute)
		claims["iat"], claims["exp"], claims["jti"] = iat.Unix(), iat.Add(lifetime).Unix(), "e2e-"+lifetime.String()
		tk := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
		tk.Header["typ"], tk.Header["kid"] = "at+jwt", "e2e-1"
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ep := g.Base + "/api/fulfilment/v4/shipments"
	if status, _, body := do(t, http.MethodGet, ep, nil, "Authorization", "Bearer "+sign(time.Hour)); status != http.StatusOK {
		t.Fatalf("a self-signed token of the configured lifetime: %d %s, want 200 (the test's signing is wrong)", status, body)
	}
	status, h, body := do(t, http.MethodGet, ep, nil, "Authorization", "Bearer "+sign(10*365*24*time.Hour))
	if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a ten-year token signed with the gateway's key: %d %s, want 401 invalid_token", status, body)
	}
	g.noPanic(t)
}

// A client id is matched exactly: another spelling of it (case, spaces,
// the form's "+" and "%20" for a space, a NUL) gets no token even with the
// right secret, in the form body or in Basic. So spelling variants cannot
// stand for the client, and failures under them only spend the caller's
// address budget.
func TestHostileTokenClientIDSpellings(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	ep := g.Base + "/api/auth/token"
	form := "application/x-www-form-urlencoded"
	spellings := []string{"GLOBEX-DEMO-CLIENT", "Globex-demo-client", " " + globexClientID, globexClientID + " ", globexClientID + "\t"}
	for _, id := range spellings {
		status, h, body := do(t, http.MethodPost, ep, nil, "Authorization", basicAuth(id, globexClientSecret))
		if status == http.StatusOK {
			t.Errorf("Basic client id %q with the right secret: 200 %s, want no token", id, body)
		} else if status != http.StatusTooManyRequests {
			oauthError(t, fmt.Sprintf("Basic client id %q", id), status, h, body, 401, "invalid_client")
		}
	}
	for _, enc := range []string{"GLOBEX-demo-client", globexClientID + "+", globexClientID + "%20", "%20" + globexClientID, globexClientID + "%00"} {
		body := "grant_type=client_credentials&client_id=" + enc + "&client_secret=" + globexClientSecret
		status, h, b := do(t, http.MethodPost, ep, strings.NewReader(body), "Content-Type", form)
		if status == http.StatusOK {
			t.Errorf("form client_id %q with the right secret: 200 %s, want no token", enc, b)
		} else if status != http.StatusTooManyRequests && status != http.StatusBadRequest {
			oauthError(t, fmt.Sprintf("form client_id %q", enc), status, h, b, 401, "invalid_client")
		}
	}
	if _, err := oauthToken(g.Base, globexClientID, globexClientSecret); err != nil {
		t.Errorf("the exact client id afterwards: %v, want a token", err)
	}
	g.noPanic(t)
	g.notInLogs(t, globexClientSecret)
}
