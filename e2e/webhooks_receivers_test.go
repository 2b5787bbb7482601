package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// whHook is one request a test receiver got (see testdata/receivers).
type whHook struct {
	ID          string `json:"id"`
	Attempt     string `json:"attempt"`
	Timestamp   string `json:"timestamp"`
	UserAgent   string `json:"userAgent"`
	ContentType string `json:"contentType"`
	Status      int    `json:"status"`
	Verified    bool   `json:"verified"`
	Body        string `json:"body"`
}

// receiver is a running Node or Python receiver process.
type whReceiver struct {
	URL  string // http://127.0.0.1:<port>
	Lang string
}

// startWhReceiver runs testdata/receivers/receiver.{js,py} for lang ("node" or
// "python") with the partner's webhook key and extra flags (--fail-first N,
// --redirect, --port P). It skips the test if the interpreter is missing.
func startWhReceiver(t testing.TB, lang, key string, flags ...string) *whReceiver {
	t.Helper()
	bin, script := "node", "receiver.js"
	if lang == "python" {
		bin, script = "python3", "receiver.py"
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("%s is not installed", bin)
	}
	args := append([]string{filepath.Join("testdata", "receivers", script), "--key", key}, flags...)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		addr, found := strings.CutPrefix(l, "listening on ")
		if !ok || !found {
			t.Fatalf("%s receiver did not start: %q\n%s", lang, l, stderr.String())
		}
		return &whReceiver{URL: "http://" + addr, Lang: lang}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s receiver did not start within 20s\n%s", lang, stderr.String())
	}
	return nil
}

// received returns what the receiver got so far.
func (r *whReceiver) received(t testing.TB) []whHook {
	t.Helper()
	status, _, body := do(t, "GET", r.URL+"/received", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /received: %d %s", status, body)
	}
	var hs []whHook
	if err := json.Unmarshal(body, &hs); err != nil {
		t.Fatalf("GET /received: %v: %s", err, body)
	}
	return hs
}

// waitReceived polls until cond holds for what r got, or fails after d.
func (r *whReceiver) waitReceived(t testing.TB, d time.Duration, what string, cond func([]whHook) bool) []whHook {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		hs := r.received(t)
		if cond(hs) {
			return hs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s receiver: %s not seen within %s; got %+v", r.Lang, what, d, hs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The receivers accept exactly what the gateway signs: bodies built by
// webhooks.Payload.Body with awkward identifiers re-serialise to the same
// bytes in JavaScript and Python, so the signature verifies; a wrong key or
// a changed body does not. This is the code the README shows.
func TestWebhookReceiversVerifySignatures(t *testing.T) {
	t.Parallel()
	key := "receiver-test-key-0123456789abcdef0123456789"
	ids := []string{"shp_123", "ü/ß/é", `quote " and \ backslash`, "tab\tnew\nline", "ctl\x01\x1f\x7f",
		"<script>&amp;</script>", "line\u2028sep\u2029", "emoji 📦", "日本語", ""}
	for _, lang := range []string{"node", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			r := startWhReceiver(t, lang, key)
			post := func(body []byte, sig string) int {
				req, _ := http.NewRequest("POST", r.URL+"/hook", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-hook-signature", sig)
				req.Header.Set("x-hook-id", fmt.Sprintf("id-%d", len(body)))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for _, id := range ids {
				body := webhooks.Event{Name: webhooks.EventShipmentShipped, Identifier: id}.Payload().Body()
				if got := post(body, webhooks.Sign([]byte(key), body)); got != 200 {
					t.Errorf("identifier %q: receiver answered %d to a correctly signed body %s", id, got, body)
				}
			}
			good := webhooks.Event{Name: webhooks.EventLabelStatus, Identifier: "lbl_1"}.Payload().Body()
			if got := post(good, webhooks.Sign([]byte("another key of the same length 0123456789ab"), good)); got != 401 {
				t.Errorf("wrong key: receiver answered %d, want 401", got)
			}
			tampered := bytes.Replace(good, []byte("lbl_1"), []byte("lbl_2"), 1)
			if got := post(tampered, webhooks.Sign([]byte(key), good)); got != 401 {
				t.Errorf("changed body: receiver answered %d, want 401", got)
			}
			if got := post([]byte("not json"), webhooks.Sign([]byte(key), []byte("not json"))); got != 401 {
				t.Errorf("not JSON: receiver answered %d, want 401", got)
			}
			hs := r.received(t)
			if len(hs) != len(ids)+3 {
				t.Fatalf("receiver recorded %d requests, want %d", len(hs), len(ids)+3)
			}
			for i, h := range hs {
				if want := i < len(ids); h.Verified != want {
					t.Errorf("request %d (%s): verified = %v, want %v", i, h.Body, h.Verified, want)
				}
			}
		})
	}
}

// --fail-first and --redirect behave as the delivery tests expect.
func TestWebhookReceiverModes(t *testing.T) {
	t.Parallel()
	key := "receiver-mode-key-0123456789abcdef0123456789"
	body := webhooks.Event{Name: webhooks.EventOutboundStatus, Identifier: "ob_1"}.Payload().Body()
	for _, lang := range []string{"node", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			send := func(r *whReceiver, id string) int {
				status, _, _ := do(t, "POST", r.URL+"/", bytes.NewReader(body),
					"Content-Type", "application/json", "x-hook-id", id, "x-hook-signature", webhooks.Sign([]byte(key), body))
				return status
			}
			f := startWhReceiver(t, lang, key, "--fail-first", "2")
			got := []int{send(f, "a"), send(f, "a"), send(f, "b"), send(f, "a"), send(f, "b"), send(f, "b")}
			if want := []int{500, 500, 500, 200, 500, 200}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("fail-first 2: statuses %v, want %v", got, want)
			}
			rd := startWhReceiver(t, lang, key, "--redirect")
			if got := send(rd, "c"); got != 302 {
				t.Errorf("redirect: status %d, want 302", got)
			}
		})
	}
}
