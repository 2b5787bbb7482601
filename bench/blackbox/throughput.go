package main

import (
	"fmt"
	"time"

	"github.com/fulfilgate/fulfilgate/bench/internal/procstat"
)

// throughputTarget is the least median ratio protected/bare.
const throughputTarget = 0.97

// round is one side's wrk run and the CPU time the gateway (and the
// simulator, when it has its own process) spent meanwhile.
type round struct {
	wrkResult
	gatewayCPU, wmsCPU time.Duration
}

// cpuPerRequest is a CPU time per request of the round, in µs.
func (r round) cpuPerRequest(cpu time.Duration) float64 {
	return float64(cpu.Nanoseconds()) / 1e3 / float64(r.requests)
}

// measure runs wrk on s while reading the processes' CPU clocks.
func measure(wrk string, load wrkLoad, s side, gw, wms procstat.Clock) (round, error) {
	g0, gErr := gw.Read()
	w0, wErr := wms.Read()
	res, err := runWrk(wrk, load, s)
	if err != nil {
		return round{}, err
	}
	r := round{wrkResult: res}
	if g1, err := gw.Read(); err == nil && gErr == nil {
		r.gatewayCPU = g1 - g0
	}
	if w1, err := wms.Read(); err == nil && wErr == nil {
		r.wmsCPU = w1 - w0
	}
	return r, nil
}

// throughput runs the round pairs and prints the figures.
func throughput(c config, wrk string, g *gateway) error {
	gw := procstat.ProcessCPU(g.proc.pid())
	var wms procstat.Clock
	where := "the simulator in the gateway's process"
	if g.wms != nil {
		wms = procstat.ProcessCPU(g.wms.pid())
		where = "the simulator in its own process"
	}
	fmt.Printf("blackbox: wrk -t%d -c%d, %d pairs of %v rounds (order alternating), %s\n",
		c.load.threads, c.load.connections, c.pairs, c.load.duration, where)
	sides := []side{g.protected, g.bare}
	if c.aa {
		// A/A: the "protected" column is the bare site too, so any
		// ratio but 1 is the machine's noise.
		sides[0] = g.bare
		fmt.Println("  A/A run: both columns are the bare site; the ratio measures noise, not the gateway")
	}
	fmt.Printf("  protected: GET %s\n  bare:      GET %s\n", sides[0].url, sides[1].url)
	warm := c.load
	warm.duration = c.warmup
	for _, s := range sides {
		if c.warmup > 0 {
			if _, err := runWrk(wrk, warm, s); err != nil {
				return err
			}
		}
	}
	results := make([][]round, 2) // [protected, bare][pair]
	for i := range c.pairs {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, j := range order {
			r, err := measure(wrk, c.load, sides[j], gw, wms)
			if err != nil {
				return err
			}
			results[j] = append(results[j], r)
		}
		p, b := results[0][i], results[1][i]
		fmt.Printf("pair %2d: protected %7.0f req/s %6.1f µs/req   bare %7.0f req/s %6.1f µs/req   ratio %.3f\n",
			i+1, p.perSecond, p.cpuPerRequest(p.gatewayCPU), b.perSecond, b.cpuPerRequest(b.gatewayCPU), p.perSecond/b.perSecond)
	}
	s := summarizePairs(results[0], results[1])
	fmt.Printf("protected: median %.0f req/s (%.0f-%.0f), median latency %v\n", s.protected.median, s.protected.lo, s.protected.hi, s.protectedP50)
	fmt.Printf("bare:      median %.0f req/s (%.0f-%.0f), median latency %v\n", s.bare.median, s.bare.lo, s.bare.hi, s.bareP50)
	fmt.Printf("gateway CPU per request (all rounds): protected %.1f µs, bare %.1f µs: %+.1f µs (%+.1f %%); per pair %+.1f µs median (%+.1f to %+.1f)\n",
		s.protectedCPU, s.bareCPU, s.protectedCPU-s.bareCPU, 100*(s.protectedCPU/s.bareCPU-1), s.cpuDiff.median, s.cpuDiff.lo, s.cpuDiff.hi)
	if g.wms != nil {
		fmt.Printf("simulator CPU per request (all rounds): protected %.1f µs, bare %.1f µs\n", s.protectedWMS, s.bareWMS)
	}
	verdict := "met"
	if s.ratio.median < throughputTarget {
		verdict = "NOT met"
	}
	if c.aa {
		fmt.Printf("A/A ratio (noise): median %.3f (range %.3f-%.3f) over %d pairs\n", s.ratio.median, s.ratio.lo, s.ratio.hi, c.pairs)
		return nil
	}
	fmt.Printf("ratio protected/bare: median %.3f (range %.3f-%.3f) over %d pairs; target >= %.2f: %s\n",
		s.ratio.median, s.ratio.lo, s.ratio.hi, c.pairs, throughputTarget, verdict)
	if verdict != "met" {
		return errTargetMissed
	}
	return nil
}

// pairSummary sums up the rounds of both sides.
type pairSummary struct {
	protected, bare, ratio, cpuDiff stats
	protectedP50, bareP50           time.Duration
	// CPU µs per request over all rounds (0 where it could not be read).
	protectedCPU, bareCPU, protectedWMS, bareWMS float64
}

func summarizePairs(prot, bare []round) pairSummary {
	var s pairSummary
	var pr, br, ratios, diffs, pl, bl []float64
	var pReq, bReq int64
	var pCPU, bCPU, pWMS, bWMS time.Duration
	for i := range prot {
		p, b := prot[i], bare[i]
		pr, br = append(pr, p.perSecond), append(br, b.perSecond)
		ratios = append(ratios, p.perSecond/b.perSecond)
		diffs = append(diffs, p.cpuPerRequest(p.gatewayCPU)-b.cpuPerRequest(b.gatewayCPU))
		pl, bl = append(pl, float64(p.p50)), append(bl, float64(b.p50))
		pReq, bReq = pReq+p.requests, bReq+b.requests
		pCPU, bCPU = pCPU+p.gatewayCPU, bCPU+b.gatewayCPU
		pWMS, bWMS = pWMS+p.wmsCPU, bWMS+b.wmsCPU
	}
	s.protected, s.bare, s.ratio, s.cpuDiff = statsOf(pr), statsOf(br), statsOf(ratios), statsOf(diffs)
	s.protectedP50 = time.Duration(statsOf(pl).median).Round(time.Microsecond)
	s.bareP50 = time.Duration(statsOf(bl).median).Round(time.Microsecond)
	perReq := func(d time.Duration, n int64) float64 {
		if n == 0 {
			return 0
		}
		return float64(d.Nanoseconds()) / 1e3 / float64(n)
	}
	s.protectedCPU, s.bareCPU = perReq(pCPU, pReq), perReq(bCPU, bReq)
	s.protectedWMS, s.bareWMS = perReq(pWMS, pReq), perReq(bWMS, bReq)
	return s
}
