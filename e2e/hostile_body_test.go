package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bodyTestSecret and bodyTestIngestKey are the credentials of
// bodyCaddyfile's partner and push endpoint.
const (
	bodyTestClient    = "body-client"
	bodyTestSecret    = "jlfU_PABtQxtacvrvZR8HFsvXTAHobLZvtIEhRXdr3U"
	bodyTestIngestKey = "3p6qPp0uueVbPVFENw0h5_tF7unajlnUSyzz-DfGltw"
)

// bodyCaddyfile serves the token endpoint, the subscriptions API and a
// push endpoint, each with a read_timeout of 1s, on GW_PORT; ingestSecret
// is the push endpoint's secret.
func bodyCaddyfile(ingestSecret string) string {
	return `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
		tokens {
			partner partner-body {
				client ` + bodyTestClient + ` ` + bodyTestSecret + `
			}
		}
		feed push
	}
}

http://127.0.0.1:{$GW_PORT} {
	route /api/auth/token {
		fulfilment_token {
			read_timeout 1s
		}
	}
	route /ingest {
		fulfilment_ingest push {
			secret ` + ingestSecret + `
			read_timeout 1s
		}
	}
	route /api/fulfilment/* {
		fulfilment_auth
		fulfilment_subscriptions {
			read_timeout 1s
		}
		respond 404
	}
}
`
}

// startBodyGateway runs bodyCaddyfile and returns the gateway's base URL.
func startBodyGateway(t *testing.T) (*gateway, string) {
	t.Helper()
	port := freePort(t)
	g := startGateway(t, bodyCaddyfile(bodyTestIngestKey), fmt.Sprintf("GW_PORT=%d", port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+"/")
	return g, base
}

// slowBody sends a request whose body (Content-Length 200) arrives one
// byte every 200 ms: never idle long enough for Caddy's idle timeout, and
// never complete. It returns the status line of the answer, or fails the
// test if none comes within 30 s (the handler hangs).
func slowBody(t *testing.T, base, path string, header ...string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 200\r\n", path, strings.TrimPrefix(base, "http://"))
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&req, "%s: %s\r\n", header[i], header[i+1])
	}
	req.WriteString("\r\n{")
	if _, err := conn.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "no answer: " + err.Error()
		}
		answer <- strings.TrimSpace(line)
	}()
	give := time.NewTicker(200 * time.Millisecond)
	defer give.Stop()
	limit := time.After(30 * time.Second)
	for {
		select {
		case line := <-answer:
			return line
		case <-give.C:
			_, _ = conn.Write([]byte(" ")) // the connection may already be closed
		case <-limit:
			t.Fatalf("POST %s: no answer 30 s into a body trickled one byte at a time: the handler waits for it", path)
			return ""
		}
	}
}

// A client trickling its body cannot hold the token, subscriptions or push
// handler: each answers 408 at its read_timeout, and the gateway goes on
// serving.
func TestHostileSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	g, base := startBodyGateway(t)
	tok := hostileToken(t, base, bodyTestClient, bodyTestSecret)
	for _, tc := range []struct {
		path   string
		header []string
	}{
		{"/api/auth/token", []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"/api/fulfilment/v4/subscriptions", []string{"Authorization", "Bearer " + tok, "Content-Type", "application/json"}},
		{"/ingest", []string{"Authorization", "Bearer " + bodyTestIngestKey, "Content-Type", "application/json"}},
	} {
		if line := slowBody(t, base, tc.path, tc.header...); !strings.HasPrefix(line, "HTTP/1.1 408") {
			t.Errorf("POST %s with a trickled body: %q, want HTTP/1.1 408", tc.path, line)
		}
	}
	status, _, body := do(t, http.MethodGet, base+"/api/fulfilment/v4/subscriptions", nil, "Authorization", "Bearer "+tok)
	if status != http.StatusOK {
		t.Errorf("a normal call after the slow bodies: %d %s", status, body)
	}
	if strings.Contains(g.Logs.String(), "panic") {
		t.Errorf("the gateway panicked:\n%s", g.Logs)
	}
}

// Wrong push secrets are throttled like wrong client secrets: 401 ten
// times, then 429 with Retry-After; the right secret still gets through.
func TestHostileIngestWrongSecretsAreThrottled(t *testing.T) {
	t.Parallel()
	_, base := startBodyGateway(t)
	push := func(secret string) (int, http.Header, []byte) {
		return do(t, http.MethodPost, base+"/ingest", strings.NewReader(`{"changes":[]}`),
			"Authorization", "Bearer "+secret, "Content-Type", "application/json")
	}
	for i := range 10 {
		if status, _, body := push(fmt.Sprintf("wrong-%02d", i)); status != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d %s, want 401", i+1, status, body)
		}
	}
	status, h, body := push("wrong-again")
	if status != http.StatusTooManyRequests || !strings.Contains(string(body), "too-many-failures") {
		t.Fatalf("11th wrong secret: %d %s, want 429 too-many-failures", status, body)
	}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q, want 1..60 seconds", h.Get("Retry-After"))
	}
	if status, _, body := push(bodyTestIngestKey); status != http.StatusOK {
		t.Errorf("the right secret while wrong ones are throttled: %d %s, want 200", status, body)
	}
}

// A push secret shorter than 32 bytes is refused when the configuration
// is checked, with a message that says what is needed.
func TestIngestShortSecretIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	short := bodyTestIngestKey[:31]
	cfg := strings.NewReplacer("{$ADMIN}", "127.0.0.1:1", "{$DATA}", filepath.Join(dir, "data"), "{$GW_PORT}", "1").Replace(bodyCaddyfile(short))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runBin(t, "validate", "--config", path, "--adapter", "caddyfile")
	if err == nil {
		t.Fatal("caddy validate accepted a 31-byte push secret")
	}
	if !strings.Contains(stderr, "at least 32") {
		t.Errorf("caddy validate's message does not say what the secret needs:\n%s", stderr)
	}
}
