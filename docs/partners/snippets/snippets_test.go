package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/internal/datadir"
	"github.com/fulfilgate/fulfilgate/storage/badgerstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// The snippets are run as partners run them, against a delivery the
// gateway's webhook service made to a real receiver on 127.0.0.1: each must
// accept it and refuse it with the body changed or another key. A language
// whose runtime is missing is skipped, except Node.js and Python under CI
// (CI=true), where they must run.

const webhookKey = "snippets-test-webhook-key-0123456789abcdef"

// captured is one request the receiver got.
type captured struct {
	body      []byte
	signature string
}

// captureDelivery publishes one event whose identifier needs JSON escaping
// and returns the delivery the receiver got.
func captureDelivery(t *testing.T) captured {
	t.Helper()
	var mu sync.Mutex
	var got []captured
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{body: b, signature: r.Header.Get("x-hook-signature")})
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)

	dir := t.TempDir()
	db, err := datadir.Open(dir, datadir.Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, err := webhooks.New(webhooks.Options{
		Storage: badgerstore.New(db).Webhooks(), AllowHTTP: true,
		Policy:     &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}},
		WebhookKey: func(string) ([]byte, error) { return []byte(webhookKey), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := svc.Subscriptions().Create(ctx, "acme", rcv.URL+"/hooks", webhooks.EventShipmentShipped); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Publish("acme", []webhooks.Event{{Name: webhooks.EventShipmentShipped, Identifier: "SHP-ü/7 \"<&>\""}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].signature == "" {
		t.Fatalf("the receiver got %d deliveries, want one signed delivery", len(got))
	}
	return got[0]
}

// runner is how one snippet is run; required under CI.
type runner struct {
	file     string
	command  []string
	inCI     bool
	language string
}

func runners() []runner {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	return []runner{
		{"verify.go", []string{goBin, "run", "verify.go"}, true, "Go"},
		{"verify.js", []string{"node", "verify.js"}, true, "Node.js"},
		{"verify.py", []string{"python3", "verify.py"}, true, "Python"},
		{"verify.sh", []string{"sh", "verify.sh"}, false, "Shell (openssl)"},
	}
}

// run runs r with body on standard input and returns its standard output
// and whether it exited 0 (go run adds its own line to standard error).
func run(t *testing.T, r runner, body []byte, signature, key string) (string, bool) {
	t.Helper()
	cmd := exec.Command(r.command[0], r.command[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+key, "X_HOOK_SIGNATURE="+signature)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("running %s: %v", r.file, err)
	}
	if err != nil && stderr.Len() > 0 {
		t.Logf("%s wrote to standard error: %s", r.file, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), err == nil
}

func TestSnippetsVerifyARealDelivery(t *testing.T) {
	d := captureDelivery(t)
	ci := os.Getenv("CI") == "true"
	for _, r := range runners() {
		t.Run(r.file, func(t *testing.T) {
			if _, err := exec.LookPath(r.command[0]); err != nil {
				if ci && r.inCI {
					t.Fatalf("%s is not installed; CI must run the %s snippet", r.command[0], r.language)
				}
				t.Skipf("%s is not installed: the %s snippet is not checked", r.command[0], r.language)
			}
			if r.file == "verify.sh" {
				if _, err := exec.LookPath("openssl"); err != nil {
					t.Skip("openssl is not installed: the shell snippet is not checked")
				}
			}
			if out, ok := run(t, r, d.body, d.signature, webhookKey); !ok || out != "valid signature" {
				t.Errorf("%s on the real delivery: %q (exit 0: %v), want \"valid signature\" and exit 0", r.file, out, ok)
			}
			tampered := bytes.Replace(d.body, []byte("SHP"), []byte("SHQ"), 1)
			if out, ok := run(t, r, tampered, d.signature, webhookKey); ok || out != "invalid signature" {
				t.Errorf("%s on a changed body: %q (exit 0: %v), want \"invalid signature\" and exit 1", r.file, out, ok)
			}
			if out, ok := run(t, r, d.body, d.signature, webhookKey+"x"); ok || out != "invalid signature" {
				t.Errorf("%s with another key: %q (exit 0: %v), want \"invalid signature\" and exit 1", r.file, out, ok)
			}
			if out, ok := run(t, r, d.body, "", webhookKey); ok || out != "invalid signature" {
				t.Errorf("%s without a signature: %q (exit 0: %v), want \"invalid signature\" and exit 1", r.file, out, ok)
			}
		})
	}
}

// The portal shows exactly these files, one per runner.
func TestSnippetsShownAreTheFilesChecked(t *testing.T) {
	shown, err := docs.VerificationSnippets()
	if err != nil {
		t.Fatal(err)
	}
	rs := runners()
	if len(shown) != len(rs) {
		t.Fatalf("%d snippets shown, %d checked: want the same", len(shown), len(rs))
	}
	for i, s := range shown {
		src, err := os.ReadFile(rs[i].file)
		if err != nil {
			t.Fatal(err)
		}
		if s.File != rs[i].file || s.Language != rs[i].language || s.Source != string(src) {
			t.Errorf("snippet %d shown as %s (%s), checked %s (%s): want the same file and language", i, s.File, s.Language, rs[i].file, rs[i].language)
		}
	}
}
