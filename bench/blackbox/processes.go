package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
)

// process is a running Caddy process of the benchmark (the gateway, maybe
// under valgrind, or the simulator), with its log file.
type process struct{ *benchgw.Process }

// startCaddy runs bin with the Caddyfile cf in dir (its HOME and XDG dirs
// too, so nothing is written outside it). With wrapper, bin runs under
// that command (valgrind and its options). env is added to the
// environment. The process dies with the benchmark.
func startCaddy(bin, dir, name, cf string, wrapper []string, env ...string) (*process, error) {
	p, err := benchgw.Caddy{Bin: bin, Dir: dir, Config: cf, ConfigName: name + ".Caddyfile", LogName: name + ".log",
		Wrapper: wrapper, Env: env}.Start()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &process{p}, nil
}

func (p *process) pid() int { return p.Pid() }

// stop interrupts the process and waits for it (killing it after a while).
func (p *process) stop() { p.Stop(30 * time.Second) }

// logTail is the end of the process's log, for error messages.
func (p *process) logTail() string { return p.LogTail(4000) }

// waitStatus polls url with GET until it answers status, the process
// exits, or within passes.
func (p *process) waitStatus(url string, status int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-p.Done:
			return fmt.Errorf("%s exited:\n%s", url, p.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %w\n%s", url, within, err, p.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// buildGateway builds ./cmd/fulfilgate as xcaddy.sh does (CGO off,
// -trimpath), but keeps the symbol table so that callgrind's and pprof's
// output names functions; the code is the same.
func buildGateway(out string) error {
	fmt.Println("blackbox: building the gateway (./cmd/fulfilgate) ...")
	build := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/fulfilgate")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the gateway (run from the repository root): %w", err)
	}
	return nil
}

// side is one of the two things compared: its name and the request its
// load sends (the same headers on both sides).
type side struct {
	name   string
	url    string
	header http.Header
}

// fetch GETs the side's URL once and returns the status, the body and the
// response headers.
func (s side) fetch(client *http.Client) (int, []byte, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

// sameAnswer makes sure both sides answer 200 with the same body (so the
// simulator does the same work for each).
func sameAnswer(a, b side) error {
	c := &http.Client{Timeout: 60 * time.Second}
	as, ab, _, err := a.fetch(c)
	if err != nil {
		return err
	}
	bs, bb, _, err := b.fetch(c)
	if err != nil {
		return err
	}
	if as != http.StatusOK || bs != http.StatusOK {
		return fmt.Errorf("%s answered %d, %s %d; want 200 from both:\n%s\n%s", a.name, as, b.name, bs, ab, bb)
	}
	if string(ab) != string(bb) {
		return fmt.Errorf("%s and %s answered different bodies:\n%s\n%s", a.name, b.name, ab, bb)
	}
	return nil
}

// guarded makes sure the side is behind the guard: its answer carries a
// request id, and without the token it answers 401.
func guarded(s side) error {
	c := &http.Client{Timeout: 60 * time.Second}
	_, _, h, err := s.fetch(c)
	if err != nil {
		return err
	}
	if h.Get("X-Request-Id") == "" {
		return fmt.Errorf("the %s side's answer has no X-Request-Id: is the guard in front of it?", s.name)
	}
	anon := side{name: "anonymous", url: s.url, header: http.Header{}}
	if as, _, _, err := anon.fetch(c); err != nil || as != http.StatusUnauthorized {
		return fmt.Errorf("the %s side without a token answered %d (%v), want 401", s.name, as, err)
	}
	return nil
}
