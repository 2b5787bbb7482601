// Package e2e runs the real gateway binary (the same main package xcaddy.sh
// builds) as a separate process on free loopback ports, with real HTTP
// clients, receivers and the WMS simulator. Every test gets its own data
// dir, admin port and listeners, so tests may run in parallel.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"

	// The tests run the gateway as a separate binary, so go test cannot see
	// that their results depend on its code. Importing the same packages the
	// binary is built from makes the e2e test binary (and so go test's cache
	// key) change whenever they change: no stale "(cached)" pass.
	_ "github.com/fulfilgate/fulfilgate"
	_ "github.com/fulfilgate/fulfilgate/wmssim"
)

// caddyBin is the binary under test, built once by TestMain (or taken from
// $FULFILGATE_CADDY, e.g. a ./caddy built by xcaddy.sh).
var caddyBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if bin := os.Getenv("FULFILGATE_CADDY"); bin != "" {
		caddyBin = bin
		return pgtest.Run(m)
	}
	dir, err := os.MkdirTemp("", "fulfilgate-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	caddyBin = filepath.Join(dir, "caddy")
	// cmd/fulfilgate is the main package xcaddy generates; these are
	// xcaddy's build tags and flags (as in xcaddy.sh).
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-w -s", "-tags", "nobadger,nomysql,nopgx",
		"-o", caddyBin, "./cmd/fulfilgate")
	build.Dir = ".."
	build.Env = os.Environ()
	if os.Getenv("CGO_ENABLED") == "" {
		build.Env = append(build.Env, "CGO_ENABLED=0")
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the gateway:", err)
		return 1
	}
	return pgtest.Run(m) // with a PostgreSQL cluster for the tests that ask for one
}

// Ports for the gateways under test come from a range below the kernel's
// ephemeral range (32768 and up on Linux), so that no port-0 listener (a
// receiver, an httptest server) and no client socket can be handed a port
// between the moment a test picks it and the moment its gateway binds it.
// The range is 20000-32000 unless $FULFILGATE_E2E_PORTS gives another
// ("<first>-<last>", e.g. for machines where other services or test runs
// use it). Within this process each port is handed out once; the start is
// spread by process id, so parallel runs rarely meet.
var (
	portMu              sync.Mutex
	portFirst, portLast = portRange(os.Getenv("FULFILGATE_E2E_PORTS"))
	nextPort            = portFirst + os.Getpid()%100*(portLast-portFirst+1)/100
)

// portRange parses "<first>-<last>" (both in 1024-65535, first <= last);
// an empty or invalid value gives the default 20000-32000, an invalid one
// with a message on stderr.
func portRange(s string) (first, last int) {
	const defFirst, defLast = 20000, 32000
	if s == "" {
		return defFirst, defLast
	}
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || first < 1024 || last > 65535 || first > last {
		fmt.Fprintf(os.Stderr, "FULFILGATE_E2E_PORTS=%q: want <first>-<last> within 1024-65535; using %d-%d\n", s, defFirst, defLast)
		return defFirst, defLast
	}
	return first, last
}

// freePort returns a TCP port on 127.0.0.1 that is free, within the port
// range, and not handed out before by this process.
func freePort(t testing.TB) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	for range portLast - portFirst + 1 {
		p := nextPort
		nextPort++
		if nextPort > portLast {
			nextPort = portFirst
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Fatalf("no free port between %d and %d on 127.0.0.1 (set FULFILGATE_E2E_PORTS to another range)", portFirst, portLast)
	return 0
}

// syncBuffer collects a process's output for assertions and failure logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gateway is one running caddy process.
type gateway struct {
	t       testing.TB
	Dir     string // working dir: Caddyfile, data dir, HOME
	Admin   string // admin address, host:port
	Env     []string
	Logs    *syncBuffer
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// startGateway writes caddyfile into a fresh dir and runs `caddy run` on it.
// The Caddyfile may use {$ADMIN} for its admin address (pass it in the global
// options as `admin {$ADMIN}`) and {$DATA} for a data dir; env adds more
// variables (KEY=VALUE). It returns once the admin endpoint answers.
func startGateway(t testing.TB, caddyfile string, env ...string) *gateway {
	t.Helper()
	dir := t.TempDir()
	g := &gateway{t: t, Dir: dir, Admin: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Logs: &syncBuffer{}}
	g.Env = append([]string{
		"ADMIN=" + g.Admin,
		"DATA=" + filepath.Join(dir, "data"),
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg-data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg-config"),
	}, env...)
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	g.start()
	t.Cleanup(g.Stop)
	return g
}

func (g *gateway) start() {
	g.t.Helper()
	if err := g.tryStart(); err != nil {
		g.t.Fatalf("%v\n%s", err, g.Logs)
	}
}

// tryStart runs the process and waits until its admin endpoint answers; it
// returns an error when the process exits first or takes over 30 s (the
// process is then killed).
func (g *gateway) tryStart() error {
	g.cmd = exec.Command(caddyBin, "run", "--config", "Caddyfile", "--adapter", "caddyfile")
	g.cmd.Dir = g.Dir
	g.cmd.Env = append(os.Environ(), g.Env...)
	g.cmd.Stdout, g.cmd.Stderr = g.Logs, g.Logs
	if err := g.cmd.Start(); err != nil {
		return err
	}
	g.done = make(chan struct{})
	go func() { g.waitErr = g.cmd.Wait(); close(g.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-g.done:
			return fmt.Errorf("caddy exited during start-up: %v", g.waitErr)
		default:
		}
		resp, err := http.Get("http://" + g.Admin + "/config/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			g.Kill9()
			return errors.New("caddy did not start within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the process gracefully (SIGTERM, then SIGKILL after 10 s).
func (g *gateway) Stop() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		// SIGQUIT makes the Go runtime print every goroutine's stack:
		// where the shutdown hangs.
		_ = g.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-g.done:
		case <-time.After(5 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.done
		}
		logs := g.Logs.String()
		g.t.Errorf("caddy did not stop within 10s of SIGTERM; the end of its log, with the goroutine dump:\n%s",
			logs[max(0, len(logs)-200000):])
	}
}

// Kill9 ends the process with SIGKILL, as a crash would.
func (g *gateway) Kill9() {
	_ = g.cmd.Process.Kill()
	<-g.done
}

// Restart starts the same Caddyfile again in the same dir (same data dir and
// admin address) after Stop or Kill9.
func (g *gateway) Restart() {
	g.t.Helper()
	g.start()
}

// Reload loads a new Caddyfile into the running process with `caddy reload`
// and returns once the previous config's listeners are closed (see
// waitReloaded): a connection opened after it cannot be reset by them.
func (g *gateway) Reload(caddyfile string) {
	g.t.Helper()
	path := filepath.Join(g.Dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		g.t.Fatal(err)
	}
	out, err := g.CLI("reload", "--config", "Caddyfile", "--adapter", "caddyfile", "--address", g.Admin, "--force")
	if err != nil {
		g.t.Fatalf("caddy reload: %v\n%s\nserver logs:\n%s", err, out, g.Logs)
	}
	g.waitReloaded()
}

// CLI runs the binary with args in the gateway's dir and environment (for
// subcommands such as `caddy fulfilment ...` that talk to the admin API).
func (g *gateway) CLI(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Dir = g.Dir
	cmd.Env = append(os.Environ(), g.Env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitHTTP waits until url answers at all (any status).
func waitHTTP(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within 20s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// do sends a request and returns status, headers and body; it fails the test
// on a transport error.
func do(t testing.TB, method, url string, body io.Reader, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// A transport of its own: no connection is kept from one call to the
	// next, so a call after a reload (which replaces the admin endpoint's
	// server) never lands on a connection the old server has closed.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header, b
}

// repoCaddyfile returns the repository's demo Caddyfile.
func repoCaddyfile(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// contains reports whether s contains every one of subs.
func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
