// Command proxy measures what the fulfilment_version handler costs on the
// proxy path. It runs the gateway binary with two sites on loopback that
// proxy to the same fixed-response upstream:
//
//	versioned  fulfilment_version + reverse_proxy   GET /api/fulfilment/v4/products -> /wms/items
//	bare       reverse_proxy                        GET /wms/items
//
// and drives them alternately, several rounds of a fixed duration each, with
// keep-alive HTTP clients. It prints each round's requests per second and
// the ratio versioned/bare (target: at least 0.97).
//
//	go run ./bench/proxy                       # uses ./caddy, or builds the gateway if it is missing or stale
//	go run ./bench/proxy -caddy ./caddy -rounds 6 -duration 5s -workers 16
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	caddyBin := flag.String("caddy", "", "gateway binary (default ./caddy if present, else built from ./cmd/fulfilgate)")
	rounds := flag.Int("rounds", 20, "rounds; each drives both sites once, alternating which goes first (many short rounds share the machine's noise evenly)")
	duration := flag.Duration("duration", time.Second, "load duration per site per round")
	workers := flag.Int("workers", 16, "concurrent keep-alive clients")
	flag.Parse()
	if err := run(*caddyBin, *rounds, *duration, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "bench/proxy:", err)
		os.Exit(1)
	}
}

func run(caddyBin string, rounds int, duration time.Duration, workers int) error {
	if rounds < 1 || workers < 1 || duration <= 0 {
		return errors.New("rounds, workers and duration must be positive")
	}
	tmp, err := os.MkdirTemp("", "fulfilgate-bench-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if caddyBin, err = findBinary(caddyBin, tmp); err != nil {
		return err
	}

	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	admin, versioned, bare, upstream := ports[0], ports[1], ports[2], ports[3]
	if err := os.WriteFile(filepath.Join(tmp, "Caddyfile"), []byte(benchCaddyfile(admin, versioned, bare, upstream)), 0o600); err != nil {
		return err
	}
	logs, err := os.Create(filepath.Join(tmp, "caddy.log"))
	if err != nil {
		return err
	}
	defer logs.Close()
	cmd := exec.Command(caddyBin, "run", "--config", "Caddyfile", "--adapter", "caddyfile")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "HOME="+tmp, "XDG_DATA_HOME="+tmp, "XDG_CONFIG_HOME="+tmp)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()

	targets := []target{
		{name: "versioned", url: fmt.Sprintf("http://127.0.0.1:%d/api/fulfilment/v4/products?page=1", versioned)},
		{name: "bare", url: fmt.Sprintf("http://127.0.0.1:%d/wms/items?page=1", bare)},
	}
	for _, t := range targets {
		if err := waitOK(t.url, 30*time.Second); err != nil {
			b, _ := os.ReadFile(logs.Name())
			return fmt.Errorf("%s site not ready: %v\n%s", t.name, err, b)
		}
	}

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers, IdleConnTimeout: time.Minute,
	}}
	fmt.Printf("bench/proxy: %s, %d rounds x %s per site, %d keep-alive workers\n",
		caddyBin, rounds, duration, workers)
	// Warm-up: connections, caches.
	for _, t := range targets {
		if _, err := drive(client, t.url, workers, duration/3); err != nil {
			return err
		}
	}
	var results []round
	for i := range rounds {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		var r round
		for _, j := range order {
			res, err := drive(client, targets[j].url, workers, duration)
			if err != nil {
				return fmt.Errorf("%s: %v", targets[j].name, err)
			}
			if j == 0 {
				r.versioned = res
			} else {
				r.bare = res
			}
		}
		results = append(results, r)
		fmt.Printf("round %d: versioned %9.0f req/s   bare %9.0f req/s   ratio %.3f\n",
			i+1, r.versioned.perSecond(), r.bare.perSecond(), r.versioned.perSecond()/r.bare.perSecond())
	}
	s := summarize(results)
	fmt.Printf("total:   versioned %9.0f req/s   bare %9.0f req/s   ratio %.3f (median of rounds %.3f; target >= 0.97)\n",
		s.versioned, s.bare, s.ratio, s.median)
	return nil
}

type target struct{ name, url string }

// result is one site's load over one round.
type result struct {
	requests int64
	elapsed  time.Duration
}

func (r result) perSecond() float64 { return float64(r.requests) / r.elapsed.Seconds() }

type round struct{ versioned, bare result }

type summary struct{ versioned, bare, ratio, median float64 }

// summarize totals the rounds: overall req/s of each site, their ratio, and
// the median of the per-round ratios.
func summarize(rounds []round) summary {
	var v, b result
	ratios := make([]float64, 0, len(rounds))
	for _, r := range rounds {
		v.requests += r.versioned.requests
		v.elapsed += r.versioned.elapsed
		b.requests += r.bare.requests
		b.elapsed += r.bare.elapsed
		ratios = append(ratios, r.versioned.perSecond()/r.bare.perSecond())
	}
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		med = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	s := summary{versioned: v.perSecond(), bare: b.perSecond(), median: med}
	s.ratio = s.versioned / s.bare
	return s
}

// drive sends GET url from workers goroutines for d; every answer must be
// 200, or the run fails.
func drive(client *http.Client, url string, workers int, d time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := get(ctx, client, url)
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
	return result{requests: n.Load(), elapsed: time.Since(start)}, firstErr
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
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
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return nil
}

// benchCaddyfile is the gateway configuration: two proxy sites in front of
// one fixed-response upstream site, all on loopback, no access logs.
func benchCaddyfile(admin, versioned, bare, upstream int) string {
	return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	default_bind 127.0.0.1
}

http://:%d {
	fulfilment_version {
		map products items
		version v4 {
			upstream_prefix /wms
		}
	}
	reverse_proxy 127.0.0.1:%d
}

http://:%d {
	reverse_proxy 127.0.0.1:%d
}

http://:%d {
	header Content-Type application/json
	respond /wms/items `+"`"+`{"items":[{"id":"ITM-1","sku":"SKU-1","name":"Demo item"}],"page":1,"page_size":50,"total":1}`+"`"+` 200
	respond 404
}
`, admin, versioned, upstream, bare, upstream, upstream)
}

// findBinary returns the binary to run: the flag, ./caddy, or a fresh build.
func findBinary(flagValue, tmp string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	if st, err := os.Stat("caddy"); err == nil && !st.IsDir() {
		// Use ./caddy only if it has the version handler (it may be stale).
		out, err := exec.Command("./caddy", "list-modules").Output()
		if err == nil && strings.Contains(string(out), "http.handlers.fulfilment_version") {
			return filepath.Abs("caddy")
		}
		fmt.Println("bench/proxy: ./caddy lacks http.handlers.fulfilment_version; building a fresh binary")
	}
	out := filepath.Join(tmp, "caddy")
	fmt.Println("bench/proxy: building the gateway (./cmd/fulfilgate) ...")
	build := exec.Command("go", "build", "-o", out, "./cmd/fulfilgate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the gateway (run from the repository root): %v", err)
	}
	return out, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitOK(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
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
