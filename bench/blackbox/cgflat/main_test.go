package main

import (
	"strings"
	"testing"
)

// Costs go to the function whose address range holds the instruction,
// relative positions included, and a call's inclusive cost (the line after
// calls=) is not its caller's own.
func TestSelfCostsByAddress(t *testing.T) {
	syms := symbols{addr: []uint64{0x1000, 0x2000, 0x3000}, name: []string{"a", "b", "c"}}
	dump := `positions: instr line
events: Ir
fn=(1) whatever callgrind thinks
0x1ff0 10 5
+16 * 7
cfn=(2) c
calls=1 0x3000 1
* * 1000
-8 +1 2
0x3004 3 11
`
	got, err := selfCosts(strings.NewReader(dump), syms)
	if err != nil {
		t.Fatal(err)
	}
	// 0x1ff0 (a) 5; 0x2000 (b) 7; the call's 1000 skipped; 0x1ff8 (a) 2; 0x3004 (c) 11.
	if got["a"] != 7 || got["b"] != 7 || got["c"] != 11 || len(got) != 3 {
		t.Fatalf("self costs %v, want a 7, b 7, c 11", got)
	}
}

func TestSelfCostsRefusesADumpWithoutAddresses(t *testing.T) {
	if _, err := selfCosts(strings.NewReader("positions: line\nevents: Ir\nfn=(1) f\n10 5\n"), symbols{}); err == nil {
		t.Fatal("a dump without --dump-instr=yes gave no error, want one")
	}
}
