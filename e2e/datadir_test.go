package e2e

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2eEncryptionKey is the data dir key the encryption tests configure.
const e2eEncryptionKey = "TcryVzTOV_Ef0fJfsW8dYdRS_tIn18aCCMUQM_X1-Dw"

// encryptedCaddyfile is the demo Caddyfile with
// encryption_key {env.FULFILGATE_ENCRYPTION_KEY}.
func encryptedCaddyfile(t testing.TB) string {
	cf := repoCaddyfile(t)
	old := "\t\tdata_dir {$FULFILGATE_DATA:./data}\n"
	if !strings.Contains(cf, old) {
		t.Fatalf("demo Caddyfile lacks %q", old)
	}
	return strings.Replace(cf, old, old+"\t\tencryption_key {env.FULFILGATE_ENCRYPTION_KEY}\n", 1)
}

// createdKeys creates a partner through the CLI and returns its webhook
// key, which the data dir keeps (client secrets are kept only hashed).
func createdKeys(t *testing.T, g *repoGateway) []string {
	t.Helper()
	var created struct {
		WebhookKey string `json:"webhook_key"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-at-rest")
	if created.WebhookKey == "" {
		t.Fatal("no webhook key in the create answer")
	}
	return []string{created.WebhookKey}
}

// secretRun is how many characters of a secret in a row filesHolding
// takes as the secret in plaintext. Badger compresses its tables with
// Snappy, which writes a run of 4 or more bytes that occurred earlier in
// the block as a back-reference: an unencrypted table holds a key's text,
// but now and then not in one piece (one control data dir in about 30
// split the 43-character webhook key so). Any 16 characters in a row of a
// random key are as sure a sign of it as the whole key, and one
// back-reference leaves a run of at least 19.
const secretRun = 16

// filesHolding returns the files under dir that contain secretRun
// characters in a row of any of secrets (a shorter secret whole).
func filesHolding(t *testing.T, dir string, secrets []string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if holdsRun(b, s) {
				out = append(out, filepath.Base(path))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// holdsRun reports whether b contains secretRun characters in a row of
// secret, or all of a shorter secret.
func holdsRun(b []byte, secret string) bool {
	n := min(secretRun, len(secret))
	for i := 0; i+n <= len(secret); i++ {
		if bytes.Contains(b, []byte(secret[i:i+n])) {
			return true
		}
	}
	return false
}

// runExpectingFailure runs the gateway's Caddyfile in g's dir and
// environment and returns its output once it exits; the test fails if it
// keeps running (30 s) or exits successfully.
func runExpectingFailure(t *testing.T, g *repoGateway, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, "run", "--config", "Caddyfile", "--adapter", "caddyfile")
	cmd.Dir = g.Dir
	cmd.Env = append(append(os.Environ(), g.Env...), env...)
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the gateway kept running:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the gateway exited successfully:\n%s", out)
	}
	return string(out)
}

// With encryption_key, the keys the data dir keeps (here a partner's
// webhook key) are not in any of its files; without it they are (the
// control). The same data dir refuses to start with another key or none,
// saying why, and starts again with its key.
func TestDataDirEncryptedAtRest(t *testing.T) {
	t.Parallel()
	plain := startRepoGateway(t, repoCaddyfile(t))
	plainKeys := createdKeys(t, plain)
	plain.Stop()
	if len(filesHolding(t, plain.DataDir, plainKeys)) == 0 {
		t.Fatal("the unencrypted control data dir does not hold the webhook key either: the test would prove nothing")
	}

	g := newRepoGateway(t, encryptedCaddyfile(t))
	g.Env = append(g.Env, "FULFILGATE_ENCRYPTION_KEY="+e2eEncryptionKey)
	g.run(t)
	keys := createdKeys(t, g)
	tok := hostileToken(t, g.Base, demoClientID, demoClientSecret)
	g.Stop()
	if found := filesHolding(t, g.DataDir, keys); len(found) != 0 {
		t.Fatalf("the encrypted data dir holds the webhook key in plaintext in %v", found)
	}

	if out := runExpectingFailure(t, g, "FULFILGATE_ENCRYPTION_KEY=Xd1S6Tju0vw1QSLzlz9p_oRWsGN250ibmYbvUXZB_vY"); !strings.Contains(out, "encrypted with another key") {
		t.Errorf("another key: the gateway's message does not say why it refused the data dir:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(g.Dir, "Caddyfile"), []byte(repoCaddyfile(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := runExpectingFailure(t, g); !strings.Contains(out, "no encryption key is configured") {
		t.Errorf("no key: the gateway's message does not say why it refused the data dir:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(g.Dir, "Caddyfile"), []byte(encryptedCaddyfile(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	g.Restart()
	waitHTTP(t, g.Base+"/")
	g.stillHealthy(t, tok)
}

// A data dir left open to other users (as older versions made it: a 0755
// dir and 0644 files) is made private at start, with a warning naming each
// path; a new data dir is private from the start.
func TestDataDirTightenedAtStart(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	if m := modeOf(t, g.DataDir); m != 0o700 {
		t.Errorf("a new data dir has mode %#o, want 0700", m)
	}
	g.Stop()
	if err := os.Chmod(g.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(g.DataDir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("data dir: %v, %d files", err, len(entries))
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(g.DataDir, e.Name()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g.Restart()
	waitHTTP(t, g.Base+"/")
	if m := modeOf(t, g.DataDir); m != 0o700 {
		t.Errorf("data dir left at %#o, want 0700", m)
	}
	for _, e := range entries {
		if m := modeOf(t, filepath.Join(g.DataDir, e.Name())); m&0o077 != 0 {
			t.Errorf("%s left at %#o, want no access for others", e.Name(), m)
		}
	}
	if !contains(g.Logs.String(), "data directory was open to other users", `"tightened":true`, "MANIFEST") {
		t.Errorf("no warning naming the loosened paths in the log:\n%s", g.Logs)
	}
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
