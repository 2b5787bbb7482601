package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/cfgcheck"
)

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	s := summarize(
		// The third subject round's CPU time could not be read.
		[]result{{900, time.Second, 100 * ms, 900}, {2000, 2 * time.Second, 300 * ms, 2000}, {950, time.Second, 0, 0}},
		[]result{{1000, time.Second, 50 * ms, 1000}, {1000, time.Second, 100 * ms, 1000}, {1000, time.Second, 150 * ms, 1000}})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.subject, 3850.0/4) || !near(s.baseline, 1000) || !near(s.ratio, 3850.0/4/1000) || !near(s.median, 0.95) {
		t.Fatalf("summary %+v", s)
	}
	if !near(s.subjectCPU, 400e3/2900) || !near(s.baselineCPU, 100) {
		t.Fatalf("CPU per request %.3f and %.3f µs, want %.3f and 100", s.subjectCPU, s.baselineCPU, 400e3/2900)
	}
	even := summarize([]result{{900, time.Second, 0, 0}, {1000, time.Second, 0, 0}}, []result{{1000, time.Second, 0, 0}, {1000, time.Second, 0, 0}})
	if even.subjectCPU != 0 || even.baselineCPU != 0 {
		t.Fatalf("CPU per request without any reading: %v, %v", even.subjectCPU, even.baselineCPU)
	}
	if !near(even.median, 0.95) {
		t.Fatalf("median of two rounds = %v", even.median)
	}
}

// The decomposition's sites: routed is the protected site without the
// guard, mapping with Caddy's rewrite; headers edits the headers as the guard does, with Caddy's own
// directives, in front of the same upstream.
func TestDecompositionSites(t *testing.T) {
	plain, all := sites(false), sites(true)
	if len(plain) != 3 || len(all) != 5 || plain[0].name != "bare" || all[0].name != "bare" {
		t.Fatalf("sites: %v / %v", plain, all)
	}
	cf := benchCaddyfile(testPorts(), "/tmp/d")
	block := func(port string) string {
		b := cf[strings.Index(cf, "http://:"+port+" {"):]
		return b[:strings.Index(b, "\n}\n")]
	}
	routed := block("6")
	if all[3].server != "routed" || strings.Contains(routed, "fulfilment_auth") || strings.Contains(routed, "fulfilment_version") ||
		!strings.Contains(routed, "rewrite /api/fulfilment/v4/products /wms/items") ||
		!strings.Contains(routed, "fulfilment_token {\n\t\tpath /api/auth/token\n\t}") || !strings.Contains(routed, "fulfilment_subscriptions") || !strings.Contains(routed, "reverse_proxy 127.0.0.1:5") {
		t.Fatalf("routed site:\n%s", routed)
	}
	headers := block("7")
	for _, want := range []string{"request_header -Authorization", "request_header X-Partner-Id", "request_header X-Request-Id",
		"header X-Request-Id", "reverse_proxy 127.0.0.1:5"} {
		if all[4].server != "headers" || !strings.Contains(headers, want) {
			t.Fatalf("headers site lacks %q:\n%s", want, headers)
		}
	}
}

// testPorts numbers the servers 1, 2, ... in their order: admin 1,
// versioned 2, protected 3, bare 4, upstream 5, routed 6, headers 7,
// blocks 8.
func testPorts() map[string]int {
	port := map[string]int{}
	for i, name := range servers {
		port[name] = i + 1
	}
	return port
}

// -route-blocks measures the protected site against the same handlers in
// route blocks (the demo's earlier shape).
func TestRouteBlocksSites(t *testing.T) {
	ts := blockSites()
	if len(ts) != 3 || ts[0].name != "bare" || ts[1].name != "protected" || ts[2].server != "blocks" || ts[2].target != 0 {
		t.Fatalf("sites: %+v", ts)
	}
	cf := benchCaddyfile(testPorts(), "/tmp/d")
	b := cf[strings.Index(cf, "http://:8 {"):]
	b = b[:strings.Index(b, "\n}\n")]
	for _, want := range []string{"route /api/auth/token {", "route /api/fulfilment/* {", "fulfilment_auth", "fulfilment_subscriptions",
		"fulfilment_version", "reverse_proxy 127.0.0.1:5"} {
		if !strings.Contains(b, want) {
			t.Fatalf("blocks site lacks %q:\n%s", want, b)
		}
	}
}

func TestBenchCaddyfile(t *testing.T) {
	cf := benchCaddyfile(testPorts(), "/tmp/d")
	for _, want := range []string{"admin 127.0.0.1:1", "http://:2 {", "fulfilment_version", "http://:3 {", "fulfilment_auth",
		"fulfilment_token", "http://:4 {", "reverse_proxy 127.0.0.1:5", "http://:5 {", "http://:6 {", "http://:7 {", "http://:8 {", "default_bind 127.0.0.1", "data_dir /tmp/d/data"} {
		if !strings.Contains(cf, want) {
			t.Errorf("Caddyfile lacks %q:\n%s", want, cf)
		}
	}
}

// The gateway accepts the benchmark's configuration (it holds the sites of
// every mode: the default, -decompose and -route-blocks): a benchmark whose
// gateway refuses to start, say for a site the route check refuses,
// measures nothing.
func TestBenchCaddyfileIsValid(t *testing.T) {
	cf := benchCaddyfile(testPorts(), t.TempDir())
	if err := cfgcheck.Validate(cf); err != nil {
		t.Fatalf("the gateway refuses the benchmark's configuration: %v\n%s", err, cf)
	}
}

// Run back to back, the rounds' orders let every site follow every other
// site equally often (across rounds too) and never itself, and each round
// drives every site once.
func TestSiteOrdersBalanced(t *testing.T) {
	for _, n := range []int{len(sites(false)), len(sites(true)), len(blockSites())} {
		checkBalanced(t, n, ordersFor(n))
	}
}

func checkBalanced(t *testing.T, n int, orders [][]int) {
	t.Helper()
	if len(orders) == 0 {
		t.Fatal("no site orders")
	}
	var seq []int
	for _, o := range orders {
		seen := map[int]bool{}
		for _, j := range o {
			if j < 0 || j >= n || seen[j] {
				t.Fatalf("order %v does not drive each of %d sites once", o, n)
			}
			seen[j] = true
		}
		if len(o) != n {
			t.Fatalf("order %v does not drive each of %d sites once", o, n)
		}
		seq = append(seq, o...)
	}
	follows := map[[2]int]int{}
	for i := range seq {
		follows[[2]int{seq[i], seq[(i+1)%len(seq)]}]++ // cyclic: the next cycle follows
	}
	want := len(seq) / (n * (n - 1))
	for a := range n {
		if follows[[2]int{a, a}] != 0 {
			t.Fatalf("site %d follows itself: %v", a, seq)
		}
		for b := range n {
			if a != b && follows[[2]int{a, b}] != want {
				t.Fatalf("%d follows %d %d times, want %d: %v", b, a, follows[[2]int{a, b}], want, seq)
			}
		}
	}
}
