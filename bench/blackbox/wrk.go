package main

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// wrkMissing is what the benchmark says when wrk is not installed.
const wrkMissing = `wrk (the HTTP load generator) is not installed. On Debian or Ubuntu:
	apt-get update && apt-get install -y wrk
(elsewhere: https://github.com/wg/wrk, or your package manager's "wrk")`

// wrkLoad is a wrk run's shape: its threads, connections (each a
// keep-alive connection) and duration (whole seconds: wrk's unit).
type wrkLoad struct {
	threads, connections int
	duration             time.Duration
}

// wrkResult is what one wrk run reports.
type wrkResult struct {
	requests  int64
	elapsed   time.Duration
	perSecond float64
	// p50 is the median latency (wrk --latency).
	p50 time.Duration
}

// runWrk drives s for load.duration and parses wrk's report. Any non-2xx
// answer or socket error fails the run.
func runWrk(wrk string, load wrkLoad, s side) (wrkResult, error) {
	args := []string{"-t", strconv.Itoa(load.threads), "-c", strconv.Itoa(load.connections),
		"-d", fmt.Sprintf("%ds", int(load.duration.Round(time.Second)/time.Second)), "--latency", "--timeout", "10s"}
	for k, vs := range s.header {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	out, err := exec.Command(wrk, append(args, s.url)...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk on %s: %w\n%s", s.name, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk on %s: %w\n%s", s.name, err, out)
	}
	return r, nil
}

var (
	wrkTotals  = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m),`)
	wrkRate    = regexp.MustCompile(`(?m)^Requests/sec:\s*([0-9.]+)`)
	wrkP50     = regexp.MustCompile(`(?m)^\s*50%\s+([0-9.]+)(us|ms|s)`)
	wrkNon2xx  = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses: (\d+)`)
	wrkSockets = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk 4's report: the requests and time, the rate, the
// median latency; an answer other than 2xx/3xx or a socket error is an
// error (the measurement would not be of the path meant).
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkTotals.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("no 'N requests in T' line")
	}
	r.requests, _ = strconv.ParseInt(m[1], 10, 64)
	r.elapsed = wrkDuration(m[2], m[3])
	if m = wrkRate.FindStringSubmatch(out); m == nil {
		return r, errors.New("no 'Requests/sec:' line")
	}
	r.perSecond, _ = strconv.ParseFloat(m[1], 64)
	if m = wrkP50.FindStringSubmatch(out); m != nil {
		r.p50 = wrkDuration(m[1], m[2])
	}
	if m = wrkNon2xx.FindStringSubmatch(out); m != nil {
		return r, fmt.Errorf("%s answers were not 2xx or 3xx", m[1])
	}
	if m = wrkSockets.FindStringSubmatch(out); m != nil {
		return r, fmt.Errorf("socket errors: %s", strings.TrimSpace(m[0]))
	}
	if r.requests == 0 || r.elapsed <= 0 {
		return r, errors.New("no requests")
	}
	return r, nil
}

// wrkDuration converts wrk's "12.34ms" style figures.
func wrkDuration(num, unit string) time.Duration {
	f, _ := strconv.ParseFloat(num, 64)
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[unit]
	return time.Duration(f * float64(scale))
}

// stats are a sample's median, least and greatest value.
type stats struct{ median, lo, hi float64 }

func statsOf(xs []float64) stats {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return stats{}
	}
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stats{median: med, lo: s[0], hi: s[n-1]}
}
