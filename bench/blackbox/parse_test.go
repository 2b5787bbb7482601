package main

import (
	"strings"
	"testing"
	"time"
)

// wrk 4.1's report, as it prints it with --latency.
const wrkReport = `Running 5s test @ http://127.0.0.1:8080/api/fulfilment/v4/products
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.41ms    1.95ms  31.36ms   83.05%
    Req/Sec     4.87k   393.57     5.67k    72.00%
  Latency Distribution
     50%    3.08ms
     75%    4.03ms
     90%    5.24ms
     99%   10.77ms
  48461 requests in 5.00s, 21.21MB read
Requests/sec:   9691.27
Transfer/sec:      4.24MB
`

func TestParseWrkReadsRequestsRateAndMedianLatency(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	if r.requests != 48461 || r.elapsed != 5*time.Second || r.perSecond != 9691.27 || r.p50 != 3080*time.Microsecond {
		t.Fatalf("parsed %+v; want 48461 requests in 5s, 9691.27 req/s, median 3.08ms", r)
	}
}

// A round whose answers were not 200 (an expired token, a down simulator)
// measured something else: it is an error, not a figure.
func TestParseWrkRefusesNon2xxAnswers(t *testing.T) {
	out := strings.Replace(wrkReport, "Requests/sec:", "  Non-2xx or 3xx responses: 12\nRequests/sec:", 1)
	if _, err := parseWrk(out); err == nil || !strings.Contains(err.Error(), "12") {
		t.Fatalf("parseWrk with 12 non-2xx answers: %v; want an error naming them", err)
	}
}

func TestParseWrkRefusesSocketErrors(t *testing.T) {
	out := strings.Replace(wrkReport, "Requests/sec:", "  Socket errors: connect 0, read 3, write 0, timeout 0\nRequests/sec:", 1)
	if _, err := parseWrk(out); err == nil {
		t.Fatal("parseWrk with socket errors gave no error, want one")
	}
}

func TestParseWrkRefusesAReportWithoutTotals(t *testing.T) {
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("parseWrk of a failed run gave no error, want one")
	}
}

// A callgrind dump's header: the trigger names the measurement, the
// totals line its instruction count.
func TestParseDumpReadsTriggerAndTotal(t *testing.T) {
	dump := "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 16657\ncmd:  ./caddy run\npart: 1\n\n" +
		"desc: I1 cache: \ndesc: Timerange: Basic block 0 - 45187750\ndesc: Trigger: dump protected-2\n\n" +
		"positions: line\nevents: Ir\nsummary: 337856955\n\nfl=(1) ./runtime/mheap.go\nfn=(1) runtime.recordspan\n12 34\n\ntotals: 337856955\n"
	trigger, total, err := parseDump(strings.NewReader(dump))
	if err != nil || trigger != "dump protected-2" || total != 337856955 {
		t.Fatalf("parseDump = %q, %d, %v; want \"dump protected-2\", 337856955", trigger, total, err)
	}
	if _, _, err := parseDump(strings.NewReader("desc: Trigger: dump x\n")); err == nil {
		t.Fatal("parseDump of a dump without totals gave no error, want one")
	}
}

func TestStatsOfGivesMedianAndRange(t *testing.T) {
	if s := statsOf([]float64{0.95, 0.91, 0.99}); s != (stats{0.95, 0.91, 0.99}) {
		t.Fatalf("odd count: %+v, want median 0.95, range 0.91-0.99", s)
	}
	if s := statsOf([]float64{4, 1, 2, 3}); s != (stats{2.5, 1, 4}) {
		t.Fatalf("even count: %+v, want median 2.5 (the mean of the middle two), range 1-4", s)
	}
}

// The ratio is per pair; CPU per request is over all rounds' requests.
func TestSummarizePairs(t *testing.T) {
	r := func(req int64, perSecond float64, cpu time.Duration) round {
		return round{wrkResult: wrkResult{requests: req, perSecond: perSecond, elapsed: time.Second}, gatewayCPU: cpu}
	}
	prot := []round{r(900, 900, 90*time.Millisecond), r(1000, 1000, 110*time.Millisecond), r(950, 950, 0)}
	bare := []round{r(1000, 1000, 80*time.Millisecond), r(1000, 1000, 80*time.Millisecond), r(1000, 1000, 80*time.Millisecond)}
	s := summarizePairs(prot, bare)
	if s.ratio != (stats{0.95, 0.9, 1}) {
		t.Fatalf("ratio %+v, want median 0.95, range 0.90-1.00", s.ratio)
	}
	if want := 200e3 / 2850; s.protectedCPU != want || s.bareCPU != 80 {
		t.Fatalf("CPU per request %.3f and %.3f µs, want %.3f and 80", s.protectedCPU, s.bareCPU, want)
	}
}
