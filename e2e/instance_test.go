package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second gateway started on the same ports with its own data dir binds
// them without an error (Caddy listens with SO_REUSEPORT) and would take
// half the connections: it must say so loudly, naming the other process,
// in its log and on GET /fulfilment.
func TestSecondGatewayOnTheSamePortsIsReported(t *testing.T) {
	t.Parallel()
	port := strconv.Itoa(freePort(t))
	first := startGateway(t, webhooksCaddyfile("allow_http"), "PORT="+port)
	waitHTTP(t, "http://127.0.0.1:"+port+"/api/auth/token")
	second := startGateway(t, webhooksCaddyfile("allow_http"), "PORT="+port)

	firstPID := strconv.Itoa(first.cmd.Process.Pid)
	whEventually(t, 10*time.Second, "the second gateway's log names the first", func() bool {
		return contains(second.Logs.String(), "another process serves this gateway's port", "pid "+firstPID, ":"+port)
	})
	var status struct {
		Instance string   `json:"instance"`
		PID      int      `json:"pid"`
		DataDir  string   `json:"data_dir"`
		Warnings []string `json:"warnings"`
	}
	adminGetJSON(t, second, "/fulfilment", &status)
	if len(status.Warnings) != 1 || !contains(status.Warnings[0], "pid "+firstPID, "SO_REUSEPORT") {
		t.Fatalf("GET /fulfilment of the second gateway: warnings %q, want one naming pid %s and SO_REUSEPORT", status.Warnings, firstPID)
	}
	if status.PID != second.cmd.Process.Pid || status.Instance == "" || status.DataDir != filepath.Join(second.Dir, "data") {
		t.Fatalf("GET /fulfilment of the second gateway: %+v, want its pid %d, an instance id and data dir %s",
			status, second.cmd.Process.Pid, filepath.Join(second.Dir, "data"))
	}
	if strings.Contains(first.Logs.String(), "another process serves this gateway's port") {
		t.Fatalf("the first gateway reported another process on its port although it was alone when it started:\n%s", first.Logs)
	}
}

// The start-up log line names the instance (the id GET /fulfilment shows),
// the process and the data dir, so that two instances can be told apart.
func TestGatewayLogsItsInstanceAndDataDirAtStart(t *testing.T) {
	t.Parallel()
	g := startGateway(t, webhooksCaddyfile("allow_http"), "PORT="+strconv.Itoa(freePort(t)))
	var status struct {
		Instance string `json:"instance"`
	}
	adminGetJSON(t, g, "/fulfilment", &status)
	whEventually(t, 10*time.Second, "start-up log line", func() bool {
		for _, line := range strings.Split(g.Logs.String(), "\n") {
			if contains(line, "fulfilment app started", `"instance":"`+status.Instance+`"`,
				fmt.Sprintf(`"pid":%d`, g.cmd.Process.Pid), `"data_dir":"`+filepath.Join(g.Dir, "data")+`"`) {
				return true
			}
		}
		return false
	})
}

// A second gateway on the same data dir cannot open it (Badger locks it):
// it must stop at start-up with a sentence that names the data dir, the
// process holding it and what to do.
func TestSecondGatewayOnTheSameDataDirIsRefused(t *testing.T) {
	t.Parallel()
	first := startGateway(t, webhooksCaddyfile("allow_http"), "PORT="+strconv.Itoa(freePort(t)))
	dir := t.TempDir()
	caddyfile := webhooksCaddyfile("allow_http")
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, "run", "--config", "Caddyfile", "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ADMIN=127.0.0.1:"+strconv.Itoa(freePort(t)), "DATA="+filepath.Join(first.Dir, "data"),
		"PORT="+strconv.Itoa(freePort(t)), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("a second gateway on the same data dir: exit %v (context %v), want it to stop with an error\n%s", err, ctx.Err(), out)
	}
	want := []string{"locked by process " + strconv.Itoa(first.cmd.Process.Pid), "same data_dir", filepath.Join(first.Dir, "data")}
	if !contains(string(out), want...) {
		t.Fatalf("a second gateway on the same data dir said:\n%s\nwant it to say %q", out, want)
	}
}

// adminGetJSON GETs path on g's admin API and decodes the 200 answer.
func adminGetJSON(t *testing.T, g *gateway, path string, v any) {
	t.Helper()
	status, _, body := do(t, "GET", "http://"+g.Admin+path, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// Every path of the gateway's admin API answers JSON, its roots included
// (before, /fulfilment was a plain-text 404 and /fulfilment/webhooks an
// HTML redirect).
func TestAdminAPIRootsAnswerJSON(t *testing.T) {
	t.Parallel()
	g := startGateway(t, webhooksCaddyfile("allow_http"), "PORT="+strconv.Itoa(freePort(t)))
	for _, c := range []struct {
		path   string
		status int
		has    string
	}{
		{"/fulfilment", 200, `"instance"`},
		{"/fulfilment/", 200, `"routes"`},
		{"/fulfilment/webhooks", 200, `"operations"`},
		{"/fulfilment/webhooks/", 200, `"queued"`},
		{"/fulfilment/nope", 404, "/fulfilment/partners"},
	} {
		status, h, body := do(t, "GET", "http://"+g.Admin+c.path, nil)
		if status != c.status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(string(body), c.has) {
			t.Errorf("GET %s: %d %q %s; want %d, JSON containing %s", c.path, status, h.Get("Content-Type"), body, c.status, c.has)
		}
	}
}
