package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	s := summarize(
		[]result{{900, time.Second}, {2000, 2 * time.Second}, {950, time.Second}},
		[]result{{1000, time.Second}, {1000, time.Second}, {1000, time.Second}})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.subject, 3850.0/4) || !near(s.baseline, 1000) || !near(s.ratio, 3850.0/4/1000) || !near(s.median, 0.95) {
		t.Fatalf("summary %+v", s)
	}
	even := summarize([]result{{900, time.Second}, {1000, time.Second}}, []result{{1000, time.Second}, {1000, time.Second}})
	if !near(even.median, 0.95) {
		t.Fatalf("median of two rounds = %v", even.median)
	}
}

func TestBenchCaddyfile(t *testing.T) {
	cf := benchCaddyfile(1, 2, 3, 4, 5, "/tmp/d")
	for _, want := range []string{"admin 127.0.0.1:1", "http://:2 {", "fulfilment_version", "http://:3 {", "fulfilment_auth",
		"fulfilment_token", "http://:4 {", "reverse_proxy 127.0.0.1:5", "http://:5 {", "default_bind 127.0.0.1", "data_dir /tmp/d/data"} {
		if !strings.Contains(cf, want) {
			t.Errorf("Caddyfile lacks %q:\n%s", want, cf)
		}
	}
}

// Run back to back, the rounds' orders let every site follow every other
// site equally often (across rounds too) and never itself, and each round
// drives every site once.
func TestSiteOrdersBalanced(t *testing.T) {
	n := len(targets)
	if len(siteOrders) == 0 {
		t.Fatal("no site orders")
	}
	var seq []int
	for _, o := range siteOrders {
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
