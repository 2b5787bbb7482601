// Command proxy measures what the gateway's handlers cost on the proxy
// path. It runs the gateway binary (a separate process, as deployed) with
// three sites on loopback that proxy to the same fixed-response upstream:
//
//	bare       reverse_proxy                                  GET /wms/items
//	versioned  fulfilment_auth + fulfilment_version +         GET /api/fulfilment/v4/products -> /wms/items
//	           reverse_proxy (the version handler forwards
//	           nothing without the guard's identity)
//	protected  the demo's shape: fulfilment_gateway (portal,   GET /api/fulfilment/v4/products -> /wms/items
//	           token endpoint, guard, subscriptions API,
//	           version mapping) + reverse_proxy
//
// With -decompose it also measures two sites that split the protected
// path's cost (shown, with no target):
//
//	routed        the portal, token endpoint and subscriptions API as
//	              directives of their own, no guard, the mapping done by
//	              Caddy's rewrite (fulfilment_version forwards nothing
//	              without the guard)
//	headers       reverse_proxy behind Caddy's own header directives doing
//	              to the headers what the guard does: Authorization
//	              removed, X-Partner-Id and X-Request-Id sent upstream,
//	              X-Request-Id on the answer (no token check)
//
// With -route-blocks it measures, instead of versioned, the protected
// site's handlers in the demo's earlier shape (shown, with no target):
//
//	blocks        route /api/auth/token { fulfilment_token } and
//	              route /api/fulfilment/* { the guard, subscriptions,
//	              version mapping and proxy }: a subroute per request
//
// Every request carries the same Bearer token (fetched from the protected
// site's token endpoint), so the sites differ only in the gateway's work.
// It drives the sites one after another for several rounds of a fixed
// duration each, with keep-alive HTTP clients, in orders that let each site
// follow each other site equally often, and prints each round's requests
// per second. It does this in several runs, each with a fresh gateway
// process (one process's ratios drift by a few per cent from the next's,
// whatever the number of rounds), and prints each run's ratios to bare and,
// per site, the ratio over all rounds of all runs (targets: versioned at
// least 0.97, protected at least 0.95).
//
//	go run ./bench/proxy                       # builds the gateway from ./cmd/fulfilgate
//	go run ./bench/proxy -caddy ./caddy -runs 3 -rounds 60 -duration 300ms -workers 16   # the defaults
//	go run ./bench/proxy -decompose            # five sites: about 6 minutes
//	go run ./bench/proxy -route-blocks         # bare, protected, blocks
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/benchgw"
	"github.com/fulfilgate/fulfilgate/bench/internal/procstat"
)

func main() {
	caddyBin := flag.String("caddy", "", "gateway binary (default: a fresh build of ./cmd/fulfilgate)")
	runs := flag.Int("runs", 3, "gateway processes, one after another; the ratios are over all their rounds (one process's ratio drifts by a few per cent from the next's)")
	rounds := flag.Int("rounds", 60, "rounds per run; each drives every site once, in orders that let each site follow each other equally often (many short rounds share the machine's noise evenly)")
	duration := flag.Duration("duration", 300*time.Millisecond, "load duration per site per round")
	workers := flag.Int("workers", 16, "concurrent keep-alive clients")
	profile := flag.String("cpuprofile", "", "after the last run's rounds, write a 10 s CPU profile of the gateway process under one site's load only to this file (read it with go tool pprof -top -cum FILE)")
	profileSite := flag.String("cpuprofile-site", "protected", "the site whose load -cpuprofile profiles: bare, versioned or protected (or, with -decompose, routed or headers; with -route-blocks, blocks)")
	decompose := flag.Bool("decompose", false, "also measure two sites that split the protected path's cost: routed (the protected site without the guard, mapping by rewrite) and headers (a bare proxy behind Caddy header directives that edit the headers as the guard does)")
	routeBlocks := flag.Bool("route-blocks", false, "measure bare, protected and blocks (the protected site's handlers inside route blocks, the demo's earlier shape) instead")
	flag.Parse()
	if *decompose && *routeBlocks {
		fmt.Fprintln(os.Stderr, "bench/proxy: -decompose and -route-blocks are different site sets; give one")
		os.Exit(2)
	}
	targets = sites(*decompose)
	if *routeBlocks {
		targets = blockSites()
	}
	siteOrders = ordersFor(len(targets))
	profiled := slices.IndexFunc(targets, func(t target) bool { return t.name == *profileSite })
	if profiled < 0 {
		fmt.Fprintln(os.Stderr, "bench/proxy: -cpuprofile-site: no site", *profileSite)
		os.Exit(2)
	}
	if err := run(*caddyBin, *runs, *rounds, *duration, *workers, profileRequest{*profile, profiled}); err != nil {
		fmt.Fprintln(os.Stderr, "bench/proxy:", err)
		os.Exit(1)
	}
}

// targets are the sites measured (set by main from the flags): bare first
// (the baseline), then the others with the least ratio to bare each must
// reach (0: none, only shown).
var targets = sites(false)

// sites returns the sites to measure; with decompose, two more that split
// the protected path's cost between the route, the guard's work and the
// headers it adds.
func sites(decompose bool) []target {
	ts := []target{
		{name: "bare", server: "bare", path: "/wms/items?page=1"},
		{name: "versioned", server: "versioned", path: "/api/fulfilment/v4/products?page=1", target: 0.97},
		{name: "protected", server: "protected", path: "/api/fulfilment/v4/products?page=1", target: 0.95},
	}
	if decompose {
		ts = append(ts,
			// The protected site's routes, no guard, the mapping done
			// by Caddy's rewrite (the version handler forwards nothing
			// without the guard).
			target{name: "routed", server: "routed", path: "/api/fulfilment/v4/products?page=1"},
			// A bare proxy behind Caddy's header directives that do to
			// the headers what the guard does (the token
			// removed, the partner id and a request id sent upstream),
			// without checking a token.
			target{name: "headers", server: "headers", path: "/wms/items?page=1"},
		)
	}
	return ts
}

// blockSites are the sites of -route-blocks: the protected site in the
// demo's flat shape against the same handlers in route blocks.
func blockSites() []target {
	ts := sites(false)
	return []target{ts[0], ts[2],
		{name: "blocks", server: "blocks", path: "/api/fulfilment/v4/products?page=1"}}
}

// profileRequest asks for a CPU profile (to path, if not empty) of the
// gateway under the load of targets[site].
type profileRequest struct {
	path string
	site int
}

func run(caddyBin string, runs, rounds int, duration time.Duration, workers int, profile profileRequest) error {
	if runs < 1 || rounds < 1 || workers < 1 || duration <= 0 {
		return errors.New("runs, rounds, workers and duration must be positive")
	}
	tmp, err := os.MkdirTemp("", "fulfilgate-bench-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if caddyBin, err = findBinary(caddyBin, tmp); err != nil {
		return err
	}
	fmt.Printf("bench/proxy: %s, %d runs x %d rounds x %s per site, %d keep-alive workers\n",
		caddyBin, runs, rounds, duration, workers)
	all := make([][]result, len(targets)) // [target][round of any run]
	perRun := make([][]float64, len(targets))
	for r := range runs {
		var prof profileRequest
		if r == runs-1 {
			prof = profile
		}
		res, err := session(caddyBin, filepath.Join(tmp, fmt.Sprint("run", r+1)), rounds, duration, workers, prof)
		if err != nil {
			return fmt.Errorf("run %d: %w", r+1, err)
		}
		line := fmt.Sprintf("run %d:", r+1)
		for j := range targets {
			all[j] = append(all[j], res[j]...)
			if j > 0 {
				ratio := summarize(res[j], res[0]).ratio
				perRun[j] = append(perRun[j], ratio)
				line += fmt.Sprintf("  %s/bare %.3f", targets[j].name, ratio)
			}
		}
		fmt.Println(line)
	}
	for j, t := range targets[1:] {
		s := summarize(all[j+1], all[0])
		verdict := fmt.Sprintf("target >= %.2f: met", t.target)
		switch {
		case t.target == 0:
			verdict = "no target: shown for comparison"
		case s.ratio < t.target:
			verdict = fmt.Sprintf("target >= %.2f: NOT met", t.target)
		}
		runsText := make([]string, len(perRun[j+1]))
		for i, v := range perRun[j+1] {
			runsText[i] = fmt.Sprintf("%.3f", v)
		}
		fmt.Printf("%-9s / bare: %7.0f vs %7.0f req/s   ratio %.3f over %d runs (runs %s; median of rounds %.3f; %s)\n",
			t.name, s.subject, s.baseline, s.ratio, runs, strings.Join(runsText, ", "), s.median, verdict)
		if s.subjectCPU > 0 && s.baselineCPU > 0 {
			fmt.Printf("%-9s   gateway CPU per request %.1f µs vs %.1f µs bare: %+.1f µs (%+.1f %%)\n",
				"", s.subjectCPU, s.baselineCPU, s.subjectCPU-s.baselineCPU, 100*(s.subjectCPU/s.baselineCPU-1))
		}
	}
	return nil
}

// session runs one gateway process in dir and drives its sites for the
// given rounds; it returns each target's rounds, in the order of targets.
func session(caddyBin, dir string, rounds int, duration time.Duration, workers int, profile profileRequest) ([][]result, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	free, err := benchgw.FreePorts(len(servers))
	if err != nil {
		return nil, err
	}
	port := map[string]int{}
	for i, name := range servers {
		port[name] = free[i]
	}
	proc, err := benchgw.Caddy{Bin: caddyBin, Dir: dir, Config: benchCaddyfile(port, dir),
		ConfigName: "Caddyfile", LogName: "caddy.log"}.Start()
	if err != nil {
		return nil, err
	}
	defer proc.Stop(10 * time.Second)

	tokenURL := fmt.Sprintf("http://127.0.0.1:%d/api/auth/token", port["protected"])
	if err := waitStatus(tokenURL, http.StatusMethodNotAllowed, 30*time.Second); err != nil {
		b, _ := os.ReadFile(proc.Log)
		return nil, fmt.Errorf("protected site not ready: %v\n%s", err, b)
	}
	token, err := benchgw.FetchToken(tokenURL)
	if err != nil {
		b, _ := os.ReadFile(proc.Log)
		return nil, fmt.Errorf("%v\n%s", err, b)
	}
	// Every site gets the identical request, token included, so that what
	// differs is the gateway's work, not the bytes on the wire.
	reqs := make([]request, len(targets))
	for j, t := range targets {
		h := http.Header{"Authorization": {"Bearer " + token}}
		reqs[j] = request{url: fmt.Sprintf("http://127.0.0.1:%d%s", port[t.server], t.path), header: h}
		if err := get(context.Background(), http.DefaultClient, reqs[j]); err != nil {
			return nil, fmt.Errorf("%s site: %v", t.name, err)
		}
	}

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: workers * 4, MaxIdleConnsPerHost: workers, IdleConnTimeout: time.Minute,
	}}
	// Warm-up: connections, caches.
	cpu := procstat.ProcessCPU(proc.Pid())
	for _, rq := range reqs {
		if _, err := drive(client, cpu, rq, workers, duration/3); err != nil {
			return nil, err
		}
	}
	results := make([][]result, len(targets)) // [target][round]
	for i := range rounds {
		// Rounds run back to back in siteOrders' orders, so that each site
		// follows each other site equally often, across rounds too: a
		// site inherits its predecessor's garbage and closing connections.
		line := fmt.Sprintf("round %2d:", i+1)
		for _, j := range siteOrders[i%len(siteOrders)] {
			res, err := drive(client, cpu, reqs[j], workers, duration)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", targets[j].name, err)
			}
			results[j] = append(results[j], res)
		}
		for j, t := range targets {
			line += fmt.Sprintf("  %s %7.0f req/s", t.name, results[j][i].perSecond())
		}
		fmt.Println(line)
	}
	if profile.path != "" {
		if err := profileGateway(client, port["admin"], targets[profile.site].name, reqs[profile.site], workers, profile.path); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// siteOrders are the orders of targets in successive rounds (set by main).
var siteOrders = ordersFor(3)

// ordersFor returns the orders of n sites in successive rounds. Run back
// to back, they give every ordered pair of different sites once per cycle
// and no site after itself: for 3 sites 0 1 2 0 2 1 0 1 2 ... (two
// rounds a cycle), for 5 a cycle of four rounds (TestSiteOrdersBalanced
// checks both). A run is balanced when its rounds are a whole number of
// cycles, as the default 60 is.
func ordersFor(n int) [][]int {
	switch n {
	case 3:
		return [][]int{{0, 1, 2}, {0, 2, 1}}
	case 5:
		return [][]int{{0, 1, 2, 3, 4}, {0, 4, 3, 2, 1}, {0, 2, 4, 1, 3}, {0, 3, 1, 4, 2}}
	}
	panic(fmt.Sprintf("bench/proxy: no balanced orders for %d sites", n))
}

// profileGateway drives url (the site named site) alone while it fetches a
// 10 s CPU profile of the gateway from its admin API (Caddy serves
// /debug/pprof there), writes it to path and says how many requests the
// load made (to compare profiles per request).
func profileGateway(client *http.Client, admin int, site string, rq request, workers int, path string) error {
	type fetched struct {
		body []byte
		err  error
	}
	done := make(chan fetched, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=10", admin))
		if err != nil {
			done <- fetched{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("profile: status %d", resp.StatusCode)
		}
		done <- fetched{b, err}
	}()
	load, err := drive(client, nil, rq, workers, 11*time.Second)
	if err != nil {
		return err
	}
	f := <-done
	if f.err != nil {
		return f.err
	}
	if err := os.WriteFile(path, f.body, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote a CPU profile of the gateway under %s load (%d requests in %v) to %s (go tool pprof -top -cum %s)\n",
		site, load.requests, load.elapsed.Round(time.Millisecond), path, path)
	return nil
}

// target is one site measured: its name, the server (Caddyfile site) it
// calls, its request path, and the least ratio to bare it must reach (0:
// none).
type target struct {
	name, server, path string
	target             float64
}

// request is what a site's load sends: GET url with header.
type request struct {
	url    string
	header http.Header
}

// result is one site's load over one round, and the gateway's CPU time
// (user and system, all threads) meanwhile: 0 where it cannot be read.
type result struct {
	requests int64
	elapsed  time.Duration
	cpu      time.Duration
	// cpuRequests are the requests of the rounds whose CPU time was read
	// (requests, or 0 when a read failed).
	cpuRequests int64
}

func (r result) perSecond() float64 { return float64(r.requests) / r.elapsed.Seconds() }

type summary struct {
	subject, baseline, ratio, median float64
	// The gateway's CPU time per request, in µs, of the subject and the
	// baseline (0 where it could not be read).
	subjectCPU, baselineCPU float64
}

// summarize totals the rounds of a subject and its baseline: each one's
// overall req/s, their ratio, the median of the per-round ratios, and each
// one's gateway CPU time per request.
func summarize(subject, baseline []result) summary {
	var v, b result
	ratios := make([]float64, 0, len(subject))
	for i := range subject {
		v = v.plus(subject[i])
		b = b.plus(baseline[i])
		ratios = append(ratios, subject[i].perSecond()/baseline[i].perSecond())
	}
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		med = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	s := summary{subject: v.perSecond(), baseline: b.perSecond(), median: med,
		subjectCPU: v.cpuPerRequest(), baselineCPU: b.cpuPerRequest()}
	s.ratio = s.subject / s.baseline
	return s
}

func (r result) plus(o result) result {
	return result{requests: r.requests + o.requests, elapsed: r.elapsed + o.elapsed,
		cpu: r.cpu + o.cpu, cpuRequests: r.cpuRequests + o.cpuRequests}
}

// cpuPerRequest is the gateway's CPU time per request in µs, over the
// rounds whose CPU time was read (0 if none was).
func (r result) cpuPerRequest() float64 {
	if r.cpuRequests == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.cpuRequests)
}

// drive sends GET url from workers goroutines for d; every answer must be
// 200, or the run fails. With cpu, it also notes the gateway's CPU time
// over the round.
func drive(client *http.Client, cpu procstat.Clock, rq request, workers int, d time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	cpu0, cpuErr := cpu.Read()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := get(ctx, client, rq)
				if err != nil {
					if ctx.Err() != nil {
						return // the round ended mid-request
					}
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	res := result{requests: n.Load(), elapsed: time.Since(start)}
	if cpu1, err := cpu.Read(); err == nil && cpuErr == nil {
		res.cpu, res.cpuRequests = cpu1-cpu0, res.requests
	}
	return res, firstErr
}

func get(ctx context.Context, client *http.Client, rq request) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rq.url, nil)
	if err != nil {
		return err
	}
	for k, v := range rq.header { // shared, read-only values
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", rq.url, resp.StatusCode)
	}
	return nil
}

// servers are the gateway's listeners: its admin API and the Caddyfile's
// sites, each on a port of its own (targets name the site they call).
var servers = []string{"admin", "versioned", "protected", "bare", "upstream", "routed", "headers", "blocks"}

// benchCaddyfile is the gateway configuration, with port giving each of
// servers its port: six proxy sites (bare, versioned, protected, routed
// and headers for -decompose, blocks for -route-blocks) in front of one
// fixed-response upstream site, all on loopback, no access logs.
// The protected site has the demo's shape (TestProtectedSiteIsTheDemosShape
// compares the two): fulfilment_gateway with the portal, the token
// endpoint, the Bearer guard, the subscriptions API and the version
// mapping, then the proxy.
func benchCaddyfile(port map[string]int, dataDir string) string {
	proxy := fmt.Sprintf("reverse_proxy 127.0.0.1:%d", port["upstream"])
	version := `fulfilment_version {
	map products items
	version v4 {
		upstream_prefix /wms
	}
}`
	// The demo's jobs as directives of their own: the token endpoint for
	// its path, then the guard (if any), the subscriptions API, the
	// version mapping and the proxy.
	routes := func(guard, mapping string) string {
		lines := []string{"fulfilment_portal {\n\tprefix /portal\n}", "fulfilment_token {\n\tpath /api/auth/token\n}", guard, "fulfilment_subscriptions", mapping, proxy}
		return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "\n")
	}
	site := func(name string, lines ...string) string {
		return fmt.Sprintf("\nhttp://:%d {\n%s}\n", port[name], indent(lines...))
	}
	return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	default_bind 127.0.0.1
	fulfilment {
		data_dir %s
		tokens {
			partner bench-partner {
				client %s %s
			}
		}
	}
}
`, port["admin"], filepath.Join(dataDir, "data"), benchClient, benchSecret) +
		site("versioned", "fulfilment_auth", version, proxy) +
		site("protected", "fulfilment_gateway {\n"+indent("portal", "token", "auth", "subscriptions", "version "+strings.TrimPrefix(version, "fulfilment_version "))+"}", proxy) +
		site("bare", proxy) +
		site("routed", routes("", "rewrite /api/fulfilment/v4/products /wms/items")) +
		// The demo's earlier shape: the same handlers in route blocks.
		site("blocks", "route /api/auth/token {\n\tfulfilment_token\n}",
			"route /api/fulfilment/* {\n"+indent("fulfilment_auth", "fulfilment_subscriptions", version, proxy)+"}") +
		site("headers",
			"request_header -Authorization",
			"request_header X-Partner-Id bench-partner",
			"request_header X-Request-Id 0f3c2a9e-8d1b-4c7a-9e2f-5b6d7c8e9f01",
			"header X-Request-Id 0f3c2a9e-8d1b-4c7a-9e2f-5b6d7c8e9f01",
			proxy) +
		site("upstream",
			"header Content-Type application/json",
			"respond /wms/items `{\"items\":[{\"id\":\"ITM-1\",\"sku\":\"SKU-1\",\"name\":\"Demo item\"}],\"page\":1,\"page_size\":50,\"total\":1}` 200",
			"respond 404")
}

// indent joins Caddyfile lines (each possibly several lines itself), one
// tab deeper, each line ending in a newline.
func indent(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		for _, line := range strings.Split(l, "\n") {
			b.WriteString("\t" + line + "\n")
		}
	}
	return b.String()
}

// The benchmark partner's credentials (for this throw-away gateway only).
const (
	benchClient = benchgw.Client
	benchSecret = benchgw.Secret
)

// findBinary returns the binary to run: the flag, or a fresh build of
// ./cmd/fulfilgate (so the figures are always for the working tree).
func findBinary(flagValue, tmp string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	out := filepath.Join(tmp, "caddy")
	fmt.Println("bench/proxy: building the gateway (./cmd/fulfilgate) ...")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-w -s", "-o", out, "./cmd/fulfilgate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the gateway (run from the repository root): %v", err)
	}
	return out, nil
}

// waitStatus polls url with GET until it answers status.
func waitStatus(url string, status int, within time.Duration) error {
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
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
