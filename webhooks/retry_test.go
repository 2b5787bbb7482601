package webhooks

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestRetryDelayBounds(t *testing.T) {
	p := DefaultRetryPolicy
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	for i, w := range want {
		if c := p.Ceiling(i + 1); c != w {
			t.Errorf("ceiling after attempt %d = %v, want %v", i+1, c, w)
		}
	}
	if c := p.Ceiling(11); c != p.Cap {
		t.Errorf("ceiling after attempt 11 = %v, want cap %v", c, p.Cap)
	}
	if c := p.Ceiling(184); c != p.Cap {
		t.Errorf("ceiling after attempt 184 = %v", c)
	}
	for a := 1; a < 190; a++ {
		lo, hi := p.Delay(a, 0), p.Delay(a, 0.999999)
		if lo != p.Base || hi > p.Ceiling(a) || hi < p.Ceiling(a)-time.Millisecond {
			t.Fatalf("attempt %d: delay range %v..%v, ceiling %v", a, lo, hi, p.Ceiling(a))
		}
	}
	if p.Delay(5, -1) != p.Base || p.Delay(5, 2) != p.Ceiling(5) {
		t.Fatal("out-of-range random not clamped")
	}
}

// TestRetryJitterSpread: delays for random inputs cover the range evenly.
func TestRetryJitterSpread(t *testing.T) {
	p := DefaultRetryPolicy
	r := rand.New(rand.NewPCG(1, 2))
	var buckets [10]int
	const n = 10000
	for i := 0; i < n; i++ {
		d := p.Delay(20, r.Float64())
		b := int(float64(d-p.Base) / float64(p.Cap-p.Base) * 10)
		buckets[min(b, 9)]++
	}
	for i, c := range buckets {
		if c < n/10*7/10 || c > n/10*13/10 {
			t.Errorf("bucket %d has %d of %d delays: jitter not uniform", i, c, n)
		}
	}
}

func TestRetryLimits(t *testing.T) {
	p := DefaultRetryPolicy
	first := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// Attempt limit: after 185 attempts there is no next, even early.
	if _, ok := p.Next(185, first, first.Add(time.Hour), 0); ok {
		t.Fatal("a 186th attempt was scheduled")
	}
	if _, ok := p.Next(184, first, first.Add(time.Hour), 0); !ok {
		t.Fatal("the 185th attempt was refused")
	}
	// Period limit: no attempt later than 24 h after the first.
	now := first.Add(24*time.Hour - 2*time.Second)
	if next, ok := p.Next(3, first, now, 0); !ok || next != now.Add(time.Second) {
		t.Fatalf("attempt due inside the period refused: %v %v", next, ok)
	}
	if _, ok := p.Next(3, first, now, 0.99); ok {
		t.Fatal("attempt after the period scheduled")
	}

	// Simulated runs: with uniform jitter the attempts spread over most of
	// the day; each run stops at 185 attempts or 24 h.
	r := rand.New(rand.NewPCG(3, 4))
	var byAttempts, byPeriod int
	for run := 0; run < 200; run++ {
		now, n := first, 1
		for {
			next, ok := p.Next(n, first, now, r.Float64())
			if !ok {
				break
			}
			now, n = next, n+1
		}
		if n > 185 || now.Sub(first) > 24*time.Hour {
			t.Fatalf("run %d: %d attempts over %v", run, n, now.Sub(first))
		}
		if n == 185 {
			byAttempts++
		} else {
			byPeriod++
		}
		if now.Sub(first) < 18*time.Hour {
			t.Fatalf("run %d: attempts stopped after %v (%d attempts): not spread over the day", run, now.Sub(first), n)
		}
	}
	t.Logf("200 runs: %d stopped at 185 attempts, %d at 24 h", byAttempts, byPeriod)
}

func TestRetrySchedule(t *testing.T) {
	p := DefaultRetryPolicy
	rows := p.Schedule()
	if len(rows) != 184 || rows[0].Attempt != 2 || rows[183].Attempt != 185 {
		t.Fatalf("rows %d", len(rows))
	}
	mean := rows[183].MeanElapsed
	if mean < 22*time.Hour || mean > 25*time.Hour {
		t.Fatalf("mean time to the 185th attempt %v, want about 24 h", mean)
	}
	md := p.ScheduleMarkdown()
	if !strings.Contains(md, "| 2 | 1s – 1s |") || !strings.Contains(md, "| 12–185 | 1s – 16m0s |") {
		t.Fatalf("markdown:\n%s", md)
	}
	t.Logf("\n%s", md)
}
