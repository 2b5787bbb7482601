package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	s := summarize([]round{
		{versioned: result{900, time.Second}, bare: result{1000, time.Second}},
		{versioned: result{2000, 2 * time.Second}, bare: result{1000, time.Second}},
		{versioned: result{950, time.Second}, bare: result{1000, time.Second}},
	})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.versioned, 3850.0/4) || !near(s.bare, 1000) || !near(s.ratio, 3850.0/4/1000) || !near(s.median, 0.95) {
		t.Fatalf("summary %+v", s)
	}
	even := summarize([]round{
		{versioned: result{900, time.Second}, bare: result{1000, time.Second}},
		{versioned: result{1000, time.Second}, bare: result{1000, time.Second}},
	})
	if !near(even.median, 0.95) {
		t.Fatalf("median of two rounds = %v", even.median)
	}
}

func TestBenchCaddyfile(t *testing.T) {
	cf := benchCaddyfile(1, 2, 3, 4)
	for _, want := range []string{"admin 127.0.0.1:1", "http://:2 {", "fulfilment_version", "http://:3 {", "reverse_proxy 127.0.0.1:4", "http://:4 {", "default_bind 127.0.0.1"} {
		if !strings.Contains(cf, want) {
			t.Errorf("Caddyfile lacks %q:\n%s", want, cf)
		}
	}
}
