package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// instructionTarget is the most protected's instructions per request may
// be, as a multiple of bare's.
const instructionTarget = 1.03

// callgrindWrapper runs the gateway under callgrind with instrumentation
// off until the measurement (start-up and warm-up run at full speed), its
// dumps in out. One P and no asynchronous preemption: valgrind runs one
// thread at a time anyway, a single P leaves no idle P to spin looking for
// work (spinning would count instructions that depend on timing), and
// callgrind 3.19 fails an assertion on the preemption signals.
func callgrindWrapper(out string) (wrapper, env []string) {
	return []string{"valgrind", "--tool=callgrind", "--instr-atstart=no",
			"--callgrind-out-file=" + filepath.Join(out, "callgrind.out.%p")},
		[]string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1"}
}

// callgrind counts the gateway's instructions per request of each side:
// reps repetitions of requests requests per side, alternating, the
// counters zeroed before and dumped after each.
func callgrind(c config, g *gateway) error {
	pid := g.proc.pid()
	fmt.Printf("blackbox: callgrind, %d repetitions of %d requests per side (%d keep-alive connections), GOMAXPROCS=1\n",
		c.reps, c.requests, c.workers)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.workers, MaxIdleConns: 2 * c.workers},
		Timeout: 5 * time.Minute}
	sides := []side{g.protected, g.bare}
	for _, s := range sides { // warm-up, uninstrumented
		if err := sendN(client, s, 4*c.workers*25, c.workers); err != nil {
			return err
		}
	}
	if err := callgrindControl(pid, "--instr=on"); err != nil {
		return err
	}
	for _, s := range sides { // warm-up of the instrumented code
		if err := sendN(client, s, c.requests/4+1, c.workers); err != nil {
			return err
		}
	}
	perReq := make([][]float64, 2)
	var ratios []float64
	for rep := range c.reps {
		order := []int{0, 1}
		if rep%2 == 1 {
			order = []int{1, 0}
		}
		for _, j := range order {
			label := fmt.Sprintf("%s-%d", sides[j].name, rep+1)
			if err := callgrindControl(pid, "--zero"); err != nil {
				return err
			}
			if err := sendN(client, sides[j], c.requests, c.workers); err != nil {
				return err
			}
			if err := callgrindControl(pid, "--dump="+label); err != nil {
				return err
			}
			ir, file, err := findDump(c.out, pid, label)
			if err != nil {
				return err
			}
			perReq[j] = append(perReq[j], float64(ir)/float64(c.requests))
			fmt.Printf("  %-12s %12d instructions: %9.0f per request  (%s)\n", label, ir, perReq[j][rep], file)
		}
		ratios = append(ratios, perReq[0][rep]/perReq[1][rep])
	}
	p, b, r := statsOf(perReq[0]), statsOf(perReq[1]), statsOf(ratios)
	verdict := "met"
	if p.median/b.median > instructionTarget {
		verdict = "NOT met"
	}
	fmt.Printf("instructions per request: protected %.0f (%.0f-%.0f), bare %.0f (%.0f-%.0f): %+.0f\n",
		p.median, p.lo, p.hi, b.median, b.lo, b.hi, p.median-b.median)
	fmt.Printf("ratio protected/bare: %.4f (repetitions %.4f-%.4f); target <= %.2f: %s\n",
		p.median/b.median, r.lo, r.hi, instructionTarget, verdict)
	fmt.Printf("read a dump with: callgrind_annotate --inclusive=yes FILE | head -60\n")
	if verdict != "met" {
		return errTargetMissed
	}
	return nil
}

// callgrindControl sends one command to the callgrind of pid.
func callgrindControl(pid int, arg string) error {
	out, err := exec.Command("callgrind_control", arg, strconv.Itoa(pid)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s %d: %v\n%s", arg, pid, err, out)
	}
	return nil
}

// findDump returns the total instructions of the dump triggered with
// label, and its file.
func findDump(dir string, pid int, label string) (int64, string, error) {
	files, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("callgrind.out.%d.*", pid)))
	if err != nil {
		return 0, "", err
	}
	for _, f := range files {
		trigger, total, err := dumpHeader(f)
		if err != nil {
			return 0, "", err
		}
		if trigger == "dump "+label {
			return total, f, nil
		}
	}
	return 0, "", fmt.Errorf("no callgrind dump for %s in %s", label, dir)
}

// dumpHeader reads a callgrind dump's trigger ("desc: Trigger: ...") and
// its total cost (the "totals:" or "summary:" line; the first event, Ir).
func dumpHeader(path string) (trigger string, total int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return parseDump(f)
}

func parseDump(r io.Reader) (trigger string, total int64, err error) {
	total = -1
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if t, ok := strings.CutPrefix(line, "desc: Trigger: "); ok {
			trigger = strings.TrimSpace(t)
		}
		for _, prefix := range []string{"totals:", "summary:"} {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				fields := strings.Fields(v)
				if len(fields) == 0 {
					return "", 0, fmt.Errorf("%q: no count", line)
				}
				if total, err = strconv.ParseInt(fields[0], 10, 64); err != nil {
					return "", 0, fmt.Errorf("%q: %w", line, err)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	if total < 0 {
		return "", 0, errors.New("callgrind dump without totals or summary")
	}
	return trigger, total, nil
}

// sendN sends exactly n GETs of s over workers keep-alive connections;
// every answer must be 200.
func sendN(client *http.Client, s side, n, workers int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if err := getOnce(ctx, client, s); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func getOnce(ctx context.Context, client *http.Client, s side) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	for k, v := range s.header {
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
		return fmt.Errorf("GET %s: status %d", s.url, resp.StatusCode)
	}
	return nil
}
