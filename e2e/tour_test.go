package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's tour, as written: its commands are read from README.md's
// "## A tour" section and run with bash, one session, against a freshly
// started demo (the repository's Caddyfile). Only the addresses change: the
// demo runs on free ports, so 127.0.0.1:8080, 127.0.0.1:8081 and the
// receiver's port 9090 are rewritten, and ./caddy is the binary under test
// pointed at the demo's admin endpoint. Each output must have the shape the
// README shows: the same lines once ids, timestamps, tokens and long numbers
// are normalised. A command that only reads (no POST, no assignment) is
// repeated until its output has that shape, for up to 20 seconds, as a
// reader would look again; a command ending in & runs in the background and
// its first lines of output are compared.

// tourStep is one "$ command" of a console block and the output shown
// after it.
type tourStep struct {
	command string
	output  []string
}

// readmeTour returns the steps of the README's tour.
func readmeTour(t *testing.T) []tourStep {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## A tour\n")
	if start < 0 {
		t.Fatal(`README.md has no "## A tour" section`)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var steps []tourStep
	inConsole, continued := false, false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "```console"):
			inConsole = true
		case strings.HasPrefix(line, "```"):
			inConsole = false
		case !inConsole:
		case continued:
			steps[len(steps)-1].command += "\n" + line
			continued = strings.HasSuffix(line, `\`)
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, tourStep{command: line[2:]})
			continued = strings.HasSuffix(line, `\`)
		case len(steps) > 0:
			steps[len(steps)-1].output = append(steps[len(steps)-1].output, line)
		}
	}
	if len(steps) < 10 {
		t.Fatalf("found only %d commands in the README's tour", len(steps))
	}
	return steps
}

// tourShapes replaces what differs from run to run by its kind.
var tourShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`eyJ[\w-]+\.[\w-]+\.[\w-]+`), "<jwt>"},
	{regexp.MustCompile(`\b(sub|whd)_[a-z2-7]{26}\b`), "${1}_<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b`), "<time>"},
	{regexp.MustCompile(`\b\d{10,}\b`), "<number>"},
}

// tourShape is the output's lines with run-to-run values normalised.
func tourShape(lines []string) string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, "\r \t")
		for _, s := range tourShapes {
			l = s.re.ReplaceAllString(l, s.repl)
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// tourShell is one bash session whose output is read command by command.
type tourShell struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	n     int
}

func startTourShell(t *testing.T, dir string, env []string) *tourShell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its background jobs end with it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &tourShell{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
		close(sh.lines)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		pw.Close()
	})
	return sh
}

// run runs command in the session and returns its output lines.
func (sh *tourShell) run(command string) []string {
	sh.t.Helper()
	sh.n++
	marker := fmt.Sprintf("__tour_step_%d_done__", sh.n)
	if _, err := fmt.Fprintf(sh.stdin, "%s\nprintf '\\n%s\\n'\n", command, marker); err != nil {
		sh.t.Fatalf("writing to bash: %v", err)
	}
	var out []string
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-sh.lines:
			if !ok {
				sh.t.Fatalf("bash ended during %q; output so far:\n%s", command, strings.Join(out, "\n"))
			}
			if l == marker {
				if n := len(out); n > 0 && out[n-1] == "" {
					out = out[:n-1] // the newline printed before the marker
				}
				return out
			}
			out = append(out, l)
		case <-timeout:
			sh.t.Fatalf("%q did not finish within 60s; output so far:\n%s", command, strings.Join(out, "\n"))
		}
	}
}

// background starts command (without its trailing &) in the background with
// its output in a file, and returns its first n lines.
func (sh *tourShell) background(command string, n int) []string {
	sh.t.Helper()
	file := filepath.Join(sh.t.TempDir(), "background.out")
	sh.run(fmt.Sprintf("%s >%s 2>&1 &", strings.TrimSuffix(strings.TrimSpace(command), "&"), file))
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(b) > 0 && len(lines) >= n {
			return lines[:n]
		}
		if time.Now().After(deadline) {
			sh.t.Fatalf("%q printed %q within 20s, want %d lines", command, b, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readsOnly reports whether a command only looks at state, so that running
// it again is harmless.
func readsOnly(command string) bool {
	first := strings.Fields(command)[0]
	return !strings.Contains(command, "-X POST") && !strings.Contains(command, " -d ") &&
		!strings.Contains(first, "=")
}

func TestReadmeTour(t *testing.T) {
	t.Parallel()
	steps := readmeTour(t)
	receiverPort := freePort(t)
	g := newRepoGateway(t, repoCaddyfile(t))
	// The demo lets webhooks reach 127.0.0.1 only at the receivers' ports.
	g.Env = append(g.Env, fmt.Sprintf("FULFILGATE_RECEIVER_PORTS=%d", receiverPort))
	g.run(t)
	g.clearLog(t) // the harness's own readiness probe reached the simulator

	wrapper := filepath.Join(t.TempDir(), "caddy")
	script := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" --address %q\n", caddyBin, g.Admin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rewrite := strings.NewReplacer(
		"127.0.0.1:8080", strings.TrimPrefix(g.Base, "http://"),
		"127.0.0.1:8081", strings.TrimPrefix(g.WMS, "http://"),
		"127.0.0.1:9090", fmt.Sprintf("127.0.0.1:%d", receiverPort),
		"--port 9090", fmt.Sprintf("--port %d", receiverPort),
		"./caddy ", wrapper+" ",
	)
	sh := startTourShell(t, "..", g.Env)

	for i, step := range steps {
		command := rewrite.Replace(step.command)
		want := tourShape(strings.Split(rewrite.Replace(strings.Join(step.output, "\n")), "\n"))
		var got []string
		switch {
		case strings.HasSuffix(strings.TrimSpace(command), "&"):
			got = sh.background(command, len(step.output))
		case readsOnly(command):
			deadline := time.Now().Add(20 * time.Second)
			for {
				got = sh.run(command)
				if tourShape(got) == want || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		default:
			got = sh.run(command)
		}
		if shape := tourShape(got); shape != want {
			t.Fatalf("tour step %d:\n$ %s\nprinted:\n%s\nwhich has the shape\n%s\nbut the README shows the shape\n%s\nserver log:\n%s",
				i+1, step.command, strings.Join(got, "\n"), shape, want, g.Logs)
		}
	}
}
