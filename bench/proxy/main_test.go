package main

import (
	"fmt"
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

// Every order of three sites, each once: each site goes first twice and
// follows each other site equally often.
func TestPermutations(t *testing.T) {
	ps := permutations(3)
	seen := map[string]bool{}
	follows := map[[2]int]int{}
	for _, p := range ps {
		key := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(p)), ","), "[]")
		if len(p) != 3 || seen[key] {
			t.Fatalf("permutations(3) = %v", ps)
		}
		seen[key] = true
		for i := 1; i < len(p); i++ {
			follows[[2]int{p[i-1], p[i]}]++
		}
	}
	if len(ps) != 6 {
		t.Fatalf("%d orders, want 6: %v", len(ps), ps)
	}
	for a := range 3 {
		for b := range 3 {
			if a != b && follows[[2]int{a, b}] != 2 {
				t.Fatalf("%d follows %d %d times, want 2: %v", b, a, follows[[2]int{a, b}], ps)
			}
		}
	}
}
