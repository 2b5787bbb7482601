package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runBin runs the gateway binary with args in the repository root and
// returns stdout, stderr and the error.
func runBin(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// The repository's demo Caddyfile adapts without warnings (the caddyfile
// adapter also warns when the file is not formatted) and `caddy fmt` leaves
// it unchanged.
func TestRepoCaddyfileAdaptsAndIsFormatted(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := runBin(t, "adapt", "--config", "Caddyfile", "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("caddy adapt: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "WARN") || strings.Contains(stderr, "warn") {
		t.Errorf("caddy adapt warned:\n%s", stderr)
	}
	var cfg struct {
		Apps map[string]json.RawMessage `json:"apps"`
	}
	if err := json.Unmarshal([]byte(stdout), &cfg); err != nil {
		t.Fatalf("adapted config is not JSON: %v\n%s", err, stdout)
	}
	for _, app := range []string{"fulfilment", "http"} {
		if cfg.Apps[app] == nil {
			t.Errorf("adapted config has no %q app", app)
		}
	}
	if !strings.Contains(stdout, `"handler":"fulfilment_version"`) || !strings.Contains(stdout, `"handler":"wms_simulator"`) {
		t.Errorf("adapted config lacks the version handler or the simulator:\n%s", stdout)
	}

	if _, stderr, err := runBin(t, "fmt", "Caddyfile"); err != nil {
		t.Errorf("caddy fmt: %v\n%s", err, stderr)
	}
	diff, stderr, err := runBin(t, "fmt", "--diff", "Caddyfile")
	if err != nil {
		t.Fatalf("caddy fmt --diff: %v\n%s", err, stderr)
	}
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "+ ") {
			t.Errorf("caddy fmt --diff: %s", line)
		}
	}
}

// A static client secret typed by hand (the demo's former secret, 42
// characters of words and runs) is refused when the configuration is
// checked, with a message naming the client and how to make a random one.
func TestWeakStaticSecretIsRefused(t *testing.T) {
	t.Parallel()
	cf := repoCaddyfile(t)
	if !strings.Contains(cf, demoAcmeSecret) {
		t.Fatal("the demo Caddyfile no longer holds the demo secret")
	}
	path := filepath.Join(t.TempDir(), "Caddyfile")
	weak := strings.Replace(cf, demoAcmeSecret, "DEMO-ONLY-acme-secret-0123456789abcdefghij", 1)
	if err := os.WriteFile(path, []byte(weak), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runBin(t, "validate", "--config", path, "--adapter", "caddyfile")
	if err == nil {
		t.Fatal("caddy validate accepted a patterned static client secret")
	}
	if !contains(stderr, "acme-demo-client", "too predictable", "caddy fulfilment secret") {
		t.Errorf("caddy validate's message does not name the client and the remedy:\n%s", stderr)
	}
}
