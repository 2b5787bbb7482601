package main

import (
	"bufio"
	"context"
	"encoding/json"
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
// callgrind 3.19 fails an assertion on the preemption signals. The dumps
// hold costs per instruction address (--dump-instr), so that a function's
// own cost can be found from the binary's symbols: callgrind's own split
// by function follows a call stack that Go's goroutine switches confuse.
// gogc, if set, is the gateway's GOGC.
func callgrindWrapper(out, gogc string) (wrapper, env []string) {
	env = []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1"}
	if gogc != "" {
		env = append(env, "GOGC="+gogc)
	}
	return []string{"valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=yes",
		"--callgrind-out-file=" + filepath.Join(out, "callgrind.out.%p")}, env
}

// callgrind counts the gateway's instructions per request of each side:
// reps repetitions of requests requests per side, the order rotating, the
// counters zeroed before and dumped after each.
func callgrind(c config, g *gateway) error {
	pid := g.proc.pid()
	gogc := c.gogc
	if gogc == "" {
		gogc = "default"
	}
	fmt.Printf("blackbox: callgrind, %d repetitions of %d requests per side (%d keep-alive connections), GOMAXPROCS=1, GOGC %s\n",
		c.reps, c.requests, c.workers, gogc)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.workers, MaxIdleConns: 2 * c.workers},
		Timeout: 5 * time.Minute}
	sides := append([]side{g.protected, g.bare}, g.parts...)
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
	perReq := make([][]float64, len(sides))
	ratios := make([][]float64, len(sides)) // to bare, per repetition
	for rep := range c.reps {
		for k := range sides {
			j := (k + rep) % len(sides) // each side first in turn
			label := fmt.Sprintf("%s-%d", sides[j].name, rep+1)
			m0, mErr := readMemStats(g.ports.admin)
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
			mem := "allocations unknown"
			if m1, err := readMemStats(g.ports.admin); err == nil && mErr == nil {
				n := float64(c.requests)
				mem = fmt.Sprintf("%5.1f allocations (%6.0f B) per request, %d GC cycles",
					float64(m1.Mallocs-m0.Mallocs)/n, float64(m1.TotalAlloc-m0.TotalAlloc)/n, m1.NumGC-m0.NumGC)
			}
			fmt.Printf("  %-12s %9.0f instructions per request, %s  (%s)\n", label, perReq[j][rep], mem, filepath.Base(file))
		}
		for j := range sides {
			ratios[j] = append(ratios[j], perReq[j][rep]/perReq[1][rep])
		}
	}
	bare := statsOf(perReq[1])
	fmt.Printf("instructions per request: bare %.0f (%.0f-%.0f)\n", bare.median, bare.lo, bare.hi)
	verdict := ""
	for j, s := range sides {
		if j == 1 {
			continue
		}
		p, r := statsOf(perReq[j]), statsOf(ratios[j])
		line := fmt.Sprintf("%-9s %.0f (%.0f-%.0f): %+.0f; ratio to bare %.4f (repetitions %.4f-%.4f)",
			s.name, p.median, p.lo, p.hi, p.median-bare.median, p.median/bare.median, r.lo, r.hi)
		if j == 0 {
			verdict = "met"
			if p.median/bare.median > instructionTarget {
				verdict = "NOT met"
			}
			line += fmt.Sprintf("; target <= %.2f: %s", instructionTarget, verdict)
		}
		fmt.Println(line)
	}
	if len(g.parts) > 0 {
		// The decomposition's sites run from bare to protected, each
		// one handler more than the one before it.
		chain := []int{1}
		for j := 2; j < len(sides); j++ {
			chain = append(chain, j)
		}
		chain = append(chain, 0)
		fmt.Print("layers, each site over the one before it:")
		for k := 1; k < len(chain); k++ {
			fmt.Printf(" %s %+.0f", sides[chain[k]].name,
				statsOf(perReq[chain[k]]).median-statsOf(perReq[chain[k-1]]).median)
		}
		fmt.Println()
	}
	fmt.Printf("each function's own instructions per request, and the difference to another dump's:\n\tgo run ./bench/blackbox/cgflat -bin %s -n %d DUMP [BASE_DUMP]\n", g.bin, c.requests)
	if verdict != "met" {
		return errTargetMissed
	}
	return nil
}

// memStats are the gateway's allocation and GC counters, from its admin
// API (expvar's memstats): they explain instructions (a repetition with
// one GC cycle more than another costs some instructions per request more)
// and count what every request allocates.
type memStats struct {
	NumGC      int64 `json:"NumGC"`
	Mallocs    int64 `json:"Mallocs"`
	TotalAlloc int64 `json:"TotalAlloc"`
}

func readMemStats(admin int) (memStats, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/vars", admin))
	if err != nil {
		return memStats{}, err
	}
	defer resp.Body.Close()
	var v struct {
		Memstats memStats `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return memStats{}, fmt.Errorf("/debug/vars: %w", err)
	}
	return v.Memstats, nil
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
