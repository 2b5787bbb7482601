package tokens

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// failN records n failures and fails the test if any of them is throttled.
func failN(t *testing.T, th *Throttle, n int, key, addr string) {
	t.Helper()
	for i := range n {
		if w := th.Failed(key, addr); w != 0 {
			t.Fatalf("failure %d of %s from %s throttled (%v); the limit was not reached yet", i+1, key, addr, w)
		}
	}
}

func TestThrottlePerClientAfterItsLimit(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: 3, ClientWindow: time.Minute, AddressFailures: 100}, clk.Now)
	failN(t, th, 3, "c1", "10.0.0.1")
	w := th.Failed("c1", "10.0.0.9")
	if w <= 0 || RetryAfterSeconds(w) != 60 {
		t.Fatalf("the 4th failure of c1 (limit 3) waits %v, want a Retry-After of 60 s", w)
	}
	if w := th.Failed("c2", "10.0.0.9"); w != 0 {
		t.Fatalf("another client id is throttled (%v): the client limit is per id", w)
	}
	clk.Add(61 * time.Second)
	if w := th.Failed("c1", "10.0.0.1"); w != 0 {
		t.Fatalf("c1 still throttled (%v) after its window passed", w)
	}
}

func TestThrottlePerAddressAfterItsLimit(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: 100, AddressFailures: 5, AddressWindow: 2 * time.Minute}, clk.Now)
	for i := range 5 {
		failN(t, th, 1, fmt.Sprint("guess-", i), "10.0.0.1")
	}
	if w := th.Failed("guess-5", "10.0.0.1"); w <= 0 || RetryAfterSeconds(w) != 120 {
		t.Fatalf("the 6th failure from one address (limit 5) waits %v, want 120 s", w)
	}
	if w := th.Failed("guess-6", "10.0.0.2"); w != 0 {
		t.Fatalf("an unrelated address is throttled (%v)", w)
	}
}

// A throttled attempt is not counted: the window ends when it said it
// would, however often the caller retries meanwhile.
func TestThrottleDoesNotExtendTheWindow(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: 2, ClientWindow: time.Minute, AddressFailures: -1}, clk.Now)
	failN(t, th, 2, "c1", "a")
	for range 50 {
		clk.Add(time.Second)
		if th.Failed("c1", "a") == 0 {
			t.Fatal("throttle let a failure through inside the window")
		}
	}
	clk.Add(11 * time.Second) // 61 s after the window began
	if w := th.Failed("c1", "a"); w != 0 {
		t.Fatalf("retries inside the window extended it: still waiting %v", w)
	}
}

// Every address of one IPv6 /64 shares one budget; another /64 has its
// own. IPv4 addresses, also IPv4-mapped ones, count one by one.
func TestThrottleCountsIPv6PerSlash64(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: -1, AddressFailures: 3}, clk.Now)
	for i := range 3 {
		failN(t, th, 1, "c", fmt.Sprintf("2001:db8:1:2:%x::%x", i, i+1))
	}
	if w := th.Failed("c", "2001:db8:1:2:ffff:ffff:ffff:ffff"); w <= 0 {
		t.Fatal("a 4th address of the same /64 was not throttled: IPv6 is counted per address, not per /64")
	}
	if w := th.Failed("c", "2001:db8:1:3::1"); w != 0 {
		t.Fatalf("the neighbouring /64 is throttled (%v)", w)
	}
	failN(t, th, 3, "c", "192.0.2.1")
	if w := th.Failed("c", "::ffff:192.0.2.1"); w <= 0 {
		t.Fatal("an IPv4-mapped address escaped the budget of its IPv4 address")
	}
	if w := th.Failed("c", "192.0.2.2"); w != 0 {
		t.Fatalf("IPv4 neighbour throttled (%v): IPv4 counts per address", w)
	}
}

func TestAddressKey(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3":             "10.1.2.3",
		"::ffff:10.1.2.3":      "10.1.2.3",
		"2001:db8::1":          "2001:db8::/64",
		"2001:db8:0:0:ab::1":   "2001:db8::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not-an-ip":            "not-an-ip",
		"":                     "",
		"2001:db8:aa:bb:cc::1": "2001:db8:aa:bb::/64",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Invented client ids longer than any real one share one budget and keep
// only the longest id's length in memory.
func TestThrottleBoundsKeyLength(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{ClientFailures: 2, AddressFailures: -1}, clk.Now)
	long := strings.Repeat("x", 64)
	failN(t, th, 2, long+"-first", "a")
	if w := th.Failed(long+"-second", "b"); w <= 0 {
		t.Fatal("ids longer than 64 bytes each got a budget of their own")
	}
	for i := range th.clients.shards {
		for k := range th.clients.shards[i].m {
			if len(k) > 64 {
				t.Fatalf("the throttle keeps a key of %d bytes", len(k))
			}
		}
	}
}

func TestThrottleBoundedAndOff(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(ThrottleConfig{MaxEntries: 64}, clk.Now)
	for i := range 10000 {
		th.Failed(fmt.Sprint("c", i), fmt.Sprint("a", i))
	}
	n := 0
	for i := range th.clients.shards {
		n += len(th.clients.shards[i].m)
	}
	if n > 64 {
		t.Fatalf("client table holds %d entries, cap 64", n)
	}
	off := NewThrottle(ThrottleConfig{ClientFailures: -1, AddressFailures: -1}, clk.Now)
	for range 100 {
		if off.Failed("c", "a") != 0 {
			t.Fatal("a throttle turned off throttled a failure")
		}
	}
}
