// Command blackbox measures the protected path the way a partner (or an
// operator) sees it: the built gateway binary in a process of its own, the
// WMS simulator in another, and wrk driving sustained keep-alive load from
// outside, in alternating rounds between
//
//	protected  GET /api/fulfilment/v4/products on the demo's gateway site
//	           (token endpoint, guard, subscriptions, version mapping,
//	           reverse_proxy), with a valid token
//	bare       GET /wms/items on a site that is only the same reverse_proxy
//
// Both sides send the same headers (the token and X-Partner-Id:
// partner-acme), so the simulator gives both the same answer; the figure is
// the ratio of the two sides' req/s, round pair by round pair.
//
// Modes:
//
//	-mode throughput  (default) -pairs rounds of each side, the order
//	                  alternating (AB, BA, ...); prints each side's req/s,
//	                  the gateway process's CPU µs per request (from
//	                  /proc/<pid>/stat) and the ratio's median and range.
//	                  Target: median ratio >= 0.97 (exit 1 when missed).
//	-mode callgrind   the gateway under valgrind --tool=callgrind
//	                  (GOMAXPROCS=1, no asynchronous preemption), a fixed
//	                  number of requests per side and repetition, counters
//	                  zeroed before and dumped after each: instructions,
//	                  allocations and GC cycles per request of each side and
//	                  the instructions' ratio, without this machine's noise.
//	                  Target: <= 1.03. A repetition with a GC cycle more
//	                  costs more: many requests per repetition even that
//	                  out, and -gogc off leaves GC out (then the bytes
//	                  allocated per request stand for its cost). -decompose
//	                  adds sites that split the protected site's cost.
//	-mode profile     a 10 s CPU profile and a 10 s allocation profile
//	                  (the admin API's /debug/pprof) of the gateway under
//	                  each side's load, written to -out, with the requests
//	                  each load made, to diff with go tool pprof -diff_base.
//
// Run it from the repository root; it builds ./cmd/fulfilgate (into -out,
// if given) unless given -caddy. wrk must be installed (apt-get install -y
// wrk), valgrind for the callgrind mode (apt-get install -y valgrind).
//
//	go run ./bench/blackbox                              # 10 pairs of 5 s rounds, 2 threads, 32 connections
//	go run ./bench/blackbox -mode callgrind              # 3 repetitions of 10000 requests per side
//	go run ./bench/blackbox -mode callgrind -gogc off -decompose -requests 3000 -out /tmp/cg
//	go run ./bench/blackbox/cgflat -bin /tmp/cg/caddy -n 3000 /tmp/cg/callgrind.out.PID.1 /tmp/cg/callgrind.out.PID.2
//	go run ./bench/blackbox -mode profile -out /tmp/prof
//	go run ./bench/blackbox -wms same                    # the simulator in the gateway's process, as in the demo
//	go run ./bench/blackbox -aa                          # bare against itself: the noise of this machine now
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
)

// config is what the flags chose.
type config struct {
	mode, caddy, wms, out string
	load                  wrkLoad
	pairs                 int
	warmup                time.Duration
	aa                    bool // throughput mode: bare against itself
	// callgrind mode
	requests, reps, workers int
	decompose               bool
	gogc                    string
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "throughput", "throughput, callgrind or profile")
	flag.StringVar(&c.caddy, "caddy", "", "gateway binary (default: a fresh build of ./cmd/fulfilgate)")
	flag.StringVar(&c.wms, "wms", "separate", "separate: the WMS simulator in a process of its own; same: in the gateway's process (the demo's shape)")
	flag.StringVar(&c.out, "out", "", "directory to keep the profiles (profile mode, required) or callgrind's dumps (callgrind mode), and the gateway binary built")
	flag.IntVar(&c.pairs, "pairs", 10, "round pairs (throughput mode), each side once per pair, the order alternating")
	flag.BoolVar(&c.aa, "aa", false, "throughput mode: measure the bare site against itself (the same URL in both columns) instead of protected against bare: the ratio's spread in such a run is this machine's noise at that time")
	flag.DurationVar(&c.load.duration, "duration", 5*time.Second, "length of one round")
	flag.DurationVar(&c.warmup, "warmup", 3*time.Second, "unmeasured load on each side first")
	flag.IntVar(&c.load.threads, "threads", 2, "wrk threads")
	flag.IntVar(&c.load.connections, "connections", 32, "wrk keep-alive connections")
	flag.IntVar(&c.requests, "requests", 10000, "requests per side and repetition (callgrind mode)")
	flag.IntVar(&c.reps, "reps", 3, "repetitions per side (callgrind mode), alternating")
	flag.IntVar(&c.workers, "workers", 4, "keep-alive connections of the callgrind mode's client")
	flag.StringVar(&c.gogc, "gogc", "", "callgrind mode: the gateway's GOGC (default: Go's, 100); off counts the instructions without garbage collection, which vary with when a cycle falls")
	flag.BoolVar(&c.decompose, "decompose", false, "callgrind mode: also count sites that split the protected site's cost into its layers, each adding one handler to the one before (guarded: bare + the guard; versioned: guarded + the version mapping; subscribed: versioned + the subscriptions API; tokenless: subscribed + the portal, the protected site without the token endpoint)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "blackbox:", err)
		os.Exit(1)
	}
}

// errTargetMissed makes the program exit 1 after printing its figures.
var errTargetMissed = errors.New("target missed")

func run(c config) error {
	if c.wms != "separate" && c.wms != "same" {
		return fmt.Errorf("-wms %q: give separate or same", c.wms)
	}
	if c.load.duration%time.Second != 0 || c.warmup%time.Second != 0 {
		return errors.New("-duration and -warmup must be whole seconds (wrk's unit)")
	}
	if c.pairs < 1 || c.load.duration <= 0 || c.load.threads < 1 || c.load.connections < c.load.threads ||
		c.requests < 1 || c.reps < 1 || c.workers < 1 {
		return errors.New("pairs, duration, threads, requests, reps and workers must be positive, connections at least threads")
	}
	var wrk string
	switch c.mode {
	case "throughput", "profile":
		var err error
		if wrk, err = exec.LookPath("wrk"); err != nil {
			return errors.New(wrkMissing)
		}
		if c.decompose || c.gogc != "" {
			return errors.New("-decompose and -gogc are for -mode callgrind")
		}
		if c.aa && c.mode != "throughput" {
			return errors.New("-aa is for -mode throughput")
		}
		if c.mode == "profile" && c.out == "" {
			return errors.New("-mode profile needs -out DIR")
		}
	case "callgrind":
		if _, err := exec.LookPath("callgrind_control"); err != nil {
			return errors.New("valgrind is not installed: apt-get install -y valgrind")
		}
		if _, err := exec.LookPath("valgrind"); err != nil {
			return errors.New("valgrind is not installed: apt-get install -y valgrind")
		}
	default:
		return fmt.Errorf("-mode %q: give throughput, callgrind or profile", c.mode)
	}
	tmp, err := os.MkdirTemp("", "fulfilgate-blackbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if c.out == "" {
		c.out = filepath.Join(tmp, "out")
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	bin := c.caddy
	if bin == "" {
		// Kept beside the dumps and profiles, which name its functions.
		bin = filepath.Join(c.out, "caddy")
		if err := buildGateway(bin); err != nil {
			return err
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}

	var wrapper, env []string
	if c.mode == "callgrind" {
		wrapper, env = callgrindWrapper(c.out, c.gogc)
	}
	g, err := startProcesses(bin, tmp, c.wms == "same", c.decompose, wrapper, env)
	if err != nil {
		return err
	}
	defer g.stop()

	switch c.mode {
	case "callgrind":
		return callgrind(c, g)
	case "profile":
		return profile(c, wrk, g)
	}
	return throughput(c, wrk, g)
}

// gateway is the running set-up: the gateway process, the simulator's
// process (nil when it runs inside the gateway), the ports, the two
// sides' requests and those of the decomposition's sites (if any).
type gateway struct {
	bin             string
	proc, wms       *process
	ports           ports
	protected, bare side
	parts           []side
}

func (g *gateway) stop() {
	g.proc.stop()
	if g.wms != nil {
		g.wms.stop()
	}
}

// startProcesses starts the simulator (unless sameProcess) and the gateway
// (under wrapper, if any), with the decomposition's sites if asked,
// fetches a token and checks both sides answer alike.
func startProcesses(bin, dir string, sameProcess, decompose bool, wrapper, env []string) (*gateway, error) {
	free, err := benchgw.FreePorts(4 + len(decomposition))
	if err != nil {
		return nil, err
	}
	p := portsOf(free, decompose)
	g := &gateway{bin: bin, ports: p}
	if !sameProcess {
		if g.wms, err = startCaddy(bin, filepath.Join(dir, "wms"), "wms", wmsCaddyfile(p), nil); err != nil {
			return nil, err
		}
		if err := g.wms.waitStatus(fmt.Sprintf("http://127.0.0.1:%d/wms/items", p.wms), http.StatusOK, 30*time.Second); err != nil {
			g.wms.stop()
			return nil, fmt.Errorf("the simulator: %w", err)
		}
	}
	within := 60 * time.Second
	if wrapper != nil {
		within = 10 * time.Minute // valgrind starts the gateway some 50 times slower
	}
	if g.proc, err = startCaddy(bin, filepath.Join(dir, "gateway"), "gateway", gatewayCaddyfile(p, filepath.Join(dir, "gateway"), sameProcess), wrapper, env...); err != nil {
		if g.wms != nil {
			g.wms.stop()
		}
		return nil, err
	}
	fail := func(err error) (*gateway, error) {
		g.stop()
		return nil, err
	}
	tokenURL := fmt.Sprintf("http://127.0.0.1:%d/api/auth/token", p.protected)
	if err := g.proc.waitStatus(tokenURL, http.StatusMethodNotAllowed, within); err != nil {
		return fail(fmt.Errorf("the gateway: %w", err))
	}
	token, err := benchgw.FetchToken(tokenURL)
	if err != nil {
		return fail(err)
	}
	h := http.Header{"Authorization": {"Bearer " + token}, "X-Partner-Id": {benchPartner}}
	g.protected = side{name: "protected", url: fmt.Sprintf("http://127.0.0.1:%d%s", p.protected, protectedPath), header: h}
	g.bare = side{name: "bare", url: fmt.Sprintf("http://127.0.0.1:%d%s", p.bare, barePath), header: h}
	if err := sameAnswer(g.protected, g.bare); err != nil {
		return fail(err)
	}
	if err := guarded(g.protected); err != nil {
		return fail(err)
	}
	for _, pt := range decomposition {
		if port, ok := p.parts[pt.name]; ok {
			s := side{name: pt.name, url: fmt.Sprintf("http://127.0.0.1:%d%s", port, pt.path), header: h}
			if err := sameAnswer(s, g.bare); err != nil {
				return fail(err)
			}
			// Every site of the decomposition has the guard.
			if err := guarded(s); err != nil {
				return fail(err)
			}
			g.parts = append(g.parts, s)
		}
	}
	return g, nil
}
