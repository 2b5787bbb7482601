package tokens

import (
	"fmt"
	"testing"
	"time"
)

func TestThrottlePerClientAndAddress(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: 3, ClientWindow: time.Minute, AddressFailures: 5, AddressWindow: 2 * time.Minute}, clk.Now)
	for i := 0; i < 3; i++ {
		if w := th.Check("c1", "10.0.0.1"); w != 0 {
			t.Fatalf("blocked after %d failures", i)
		}
		th.Fail("c1", "10.0.0.1")
	}
	w := th.Check("c1", "10.0.0.9")
	if w <= 0 || w > time.Minute {
		t.Fatalf("client not throttled: %v", w)
	}
	if RetryAfterSeconds(w) != 60 {
		t.Fatalf("Retry-After %d", RetryAfterSeconds(w))
	}
	// Another client from the same address still passes (2 more address failures allowed).
	if w := th.Check("c2", "10.0.0.1"); w != 0 {
		t.Fatalf("other client blocked: %v", w)
	}
	th.Fail("c2", "10.0.0.1")
	th.Fail("c3", "10.0.0.1")
	if w := th.Check("c4", "10.0.0.1"); w <= 0 {
		t.Fatal("address not throttled after 5 failures")
	}
	if w := th.Check("c4", "10.0.0.2"); w != 0 {
		t.Fatal("unrelated address throttled")
	}
	clk.Add(61 * time.Second)
	if w := th.Check("c1", "10.0.0.2"); w != 0 {
		t.Fatalf("client window did not reset: %v", w)
	}
	if w := th.Check("c5", "10.0.0.1"); w <= 0 || RetryAfterSeconds(w) != 59 {
		t.Fatalf("address window: %v", w)
	}
	clk.Add(time.Minute)
	if w := th.Check("c5", "10.0.0.1"); w != 0 {
		t.Fatalf("address window did not reset: %v", w)
	}
}

func TestThrottleBoundedAndOff(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{MaxEntries: 64}, clk.Now)
	for i := 0; i < 10000; i++ {
		th.Fail(fmt.Sprint("c", i), fmt.Sprint("a", i))
	}
	n := 0
	for i := range th.clients.shards {
		n += len(th.clients.shards[i].m)
	}
	if n > 64 {
		t.Fatalf("client table holds %d entries, cap 64", n)
	}
	off := NewThrottle(ThrottleConfig{ClientFailures: -1, AddressFailures: -1}, clk.Now)
	for i := 0; i < 100; i++ {
		off.Fail("c", "a")
	}
	if off.Check("c", "a") != 0 {
		t.Fatal("disabled throttle blocks")
	}
}
