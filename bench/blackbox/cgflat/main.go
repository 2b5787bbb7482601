// Command cgflat prints each function's own instructions from a callgrind
// dump written with --dump-instr=yes (as bench/blackbox -mode callgrind
// writes them), per request, and with a second dump the difference:
//
//	go run ./bench/blackbox/cgflat -bin DIR/caddy -n 5000 DIR/callgrind.out.PID.1 [DIR/callgrind.out.PID.2]
//
// It maps every instruction address to its function through the binary's
// symbol table. callgrind's own split by function (callgrind_annotate)
// follows a call stack that Go's goroutine switches confuse; the cost of an
// instruction address is exact.
package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	bin := flag.String("bin", "", "the gateway binary the dumps are of (with its symbol table)")
	n := flag.Float64("n", 1, "requests per dump: costs are divided by it")
	top := flag.Int("top", 60, "functions to print")
	flag.Parse()
	if *bin == "" || flag.NArg() < 1 || flag.NArg() > 2 || *n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: cgflat -bin BINARY [-n REQUESTS] DUMP [BASE_DUMP]")
		os.Exit(2)
	}
	if err := run(os.Stdout, *bin, *n, *top, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "cgflat:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, bin string, n float64, top int, dumps []string) error {
	syms, err := readSymbols(bin)
	if err != nil {
		return err
	}
	costs := make([]map[string]int64, len(dumps))
	for i, d := range dumps {
		f, err := os.Open(d)
		if err != nil {
			return err
		}
		costs[i], err = selfCosts(f, syms)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	base := map[string]int64{}
	if len(costs) == 2 {
		base = costs[1]
	}
	names := map[string]bool{}
	var total, baseTotal int64
	for name, c := range costs[0] {
		names[name] = true
		total += c
	}
	for name, c := range base {
		names[name] = true
		baseTotal += c
	}
	type row struct {
		name      string
		cost, dif float64
	}
	var rows []row
	for name := range names {
		c, b := float64(costs[0][name])/n, float64(base[name])/n
		rows = append(rows, row{name, c, c - b})
	}
	sort.Slice(rows, func(i, j int) bool {
		if math.Abs(rows[i].dif) != math.Abs(rows[j].dif) {
			return math.Abs(rows[i].dif) > math.Abs(rows[j].dif)
		}
		return rows[i].name < rows[j].name
	})
	if len(costs) == 2 {
		fmt.Fprintf(out, "instructions per request: %.0f, base %.0f: %+.0f\n  difference       own      base  function\n",
			float64(total)/n, float64(baseTotal)/n, float64(total-baseTotal)/n)
	} else {
		fmt.Fprintf(out, "instructions per request: %.0f\n       own  function\n", float64(total)/n)
	}
	for i, r := range rows {
		if i == top {
			break
		}
		if len(costs) == 2 {
			fmt.Fprintf(out, "%+12.0f %9.0f %9.0f  %s\n", r.dif, r.cost, r.cost-r.dif, r.name)
		} else {
			fmt.Fprintf(out, "%10.0f  %s\n", r.cost, r.name)
		}
	}
	return nil
}

// symbols are a binary's function symbols, sorted by address.
type symbols struct {
	addr []uint64
	name []string
}

func readSymbols(bin string) (symbols, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return symbols{}, err
	}
	defer f.Close()
	all, err := f.Symbols()
	if err != nil {
		return symbols{}, fmt.Errorf("%s: %w (build it without -ldflags -s)", bin, err)
	}
	var fns []elf.Symbol
	for _, s := range all {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			fns = append(fns, s)
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].Value < fns[j].Value })
	var s symbols
	for _, fn := range fns {
		s.addr = append(s.addr, fn.Value)
		s.name = append(s.name, fn.Name)
	}
	return s, nil
}

func (s symbols) lookup(addr uint64) string {
	i := sort.Search(len(s.addr), func(i int) bool { return s.addr[i] > addr }) - 1
	if i < 0 {
		return "?"
	}
	return s.name[i]
}

// selfCosts sums a dump's cost lines by the function of their address.
// Position lines give an address ("0x4a5b6c", or relative "+3", "-8", or
// "*" for the same), then a line number and the cost; the cost line after
// a "calls=" line is the call's inclusive cost, not the caller's own.
func selfCosts(r io.Reader, syms symbols) (map[string]int64, error) {
	costs := map[string]int64{}
	var pos uint64
	afterCall := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	sawInstr := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "positions:") {
			sawInstr = strings.Contains(line, "instr")
			continue
		}
		if strings.HasPrefix(line, "calls=") {
			afterCall = true
			continue
		}
		if line == "" || !strings.ContainsAny(line[:1], "0+-*") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch a := f[0]; {
		case strings.HasPrefix(a, "0x"):
			v, err := strconv.ParseUint(a[2:], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("address %q: %w", a, err)
			}
			pos = v
		case a[0] == '+' || a[0] == '-':
			d, err := strconv.ParseUint(a[1:], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("address %q: %w", a, err)
			}
			if a[0] == '+' {
				pos += d
			} else {
				pos -= d
			}
		}
		if afterCall {
			afterCall = false
			continue
		}
		c, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cost %q: %w", line, err)
		}
		costs[syms.lookup(pos)] += c
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawInstr {
		return nil, errors.New("no instruction positions: the dump was not written with --dump-instr=yes")
	}
	return costs, nil
}
