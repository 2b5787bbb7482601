// Package loadtest is what the in-process throughput benchmarks share: a
// gateway config loaded into this process, a small upstream on loopback,
// and a closed-loop load generator that measures two targets in
// alternating rounds, so that both see the same (noisy) machine and the
// figure that counts is their ratio.
package loadtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
)

// Concurrency is the number of workers, each with its own keep-alive
// connection.
const Concurrency = 16

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// LoadCaddyfile adapts caddyfile and runs it in this process until the
// benchmark ends.
func LoadCaddyfile(tb testing.TB, caddyfile string) {
	tb.Helper()
	cfg, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
	if err != nil {
		tb.Fatalf("adapt: %v %v", err, warn)
	}
	if err := caddy.Load(cfg, true); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = caddy.Stop() })
}

// Upstream serves a small fixed JSON answer on loopback and returns its
// host:port.
func Upstream(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	body := []byte(`{"items":[{"id":"s1","status":"shipped"}],"page":1,"page_size":50,"total":1}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(l) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// Target is one kind of request: method, URL and how to decorate it.
type Target struct {
	Name     string
	Method   string
	URL      string
	Decorate func(*http.Request) // may be nil
}

// Client is an HTTP client that keeps one connection per worker.
func Client() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: Concurrency * 2, MaxIdleConns: Concurrency * 4}}
}

// Run sends about n requests to t from Concurrency workers and returns how
// many it sent and how long they took. Any status other than 200 or a
// transport error fails the benchmark.
func Run(tb testing.TB, client *http.Client, t Target, n int) (int, time.Duration) {
	var wg sync.WaitGroup
	per := max(n/Concurrency, 1)
	start := time.Now()
	for range Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				req, err := http.NewRequest(t.Method, t.URL, nil)
				if err != nil {
					tb.Error(err)
					return
				}
				if t.Decorate != nil {
					t.Decorate(req)
				}
				resp, err := client.Do(req)
				if err != nil {
					tb.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					tb.Errorf("%s %s: %d", t.Method, t.URL, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return per * Concurrency, time.Since(start)
}

// Compare's shape: warm-up requests per target, then rounds of
// roundSize(b.N) requests per target.
const (
	warmUp        = Concurrency * 20
	compareRounds = 10
)

func roundSize(bN int) int { return max(bN/compareRounds, Concurrency) }

// Requests is how many requests Compare sends each target for b.N, the
// warm-up included (Run sends whole multiples of Concurrency).
func Requests(bN int) int {
	sent := func(n int) int { return max(n/Concurrency, 1) * Concurrency }
	return sent(warmUp) + compareRounds*sent(roundSize(bN))
}

// Compare warms both targets up, then measures them in rounds that
// alternate which goes first (b.N requests in all per target), reports each one's req/s and the ratio
// subject/baseline as benchmark metrics, logs them, and returns the ratio.
func Compare(b *testing.B, subject, baseline Target) float64 {
	client := Client()
	Run(b, client, subject, warmUp)
	Run(b, client, baseline, warmUp)

	n := roundSize(b.N)
	var sent int
	var tSubject, tBaseline time.Duration
	b.ResetTimer()
	for r := range compareRounds {
		// Alternate which goes first, so that neither always inherits the
		// other's garbage and connection state.
		if r%2 == 1 {
			_, d := Run(b, client, baseline, n)
			tBaseline += d
		}
		k, d := Run(b, client, subject, n)
		sent += k
		tSubject += d
		if r%2 == 0 {
			_, d = Run(b, client, baseline, n)
			tBaseline += d
		}
	}
	b.StopTimer()
	subjectRate, baselineRate := float64(sent)/tSubject.Seconds(), float64(sent)/tBaseline.Seconds()
	ratio := subjectRate / baselineRate
	b.ReportMetric(subjectRate, subject.Name+"-req/s")
	b.ReportMetric(baselineRate, baseline.Name+"-req/s")
	b.ReportMetric(ratio, "ratio")
	b.Log(fmt.Sprintf("%s / %s throughput ratio: %.3f (%.0f vs %.0f req/s)",
		subject.Name, baseline.Name, ratio, subjectRate, baselineRate))
	return ratio
}
