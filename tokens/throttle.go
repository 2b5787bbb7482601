package tokens

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// ThrottleConfig limits failed authentication attempts (answered 429 with
// Retry-After). A limit of 0 takes the default; a negative limit turns that
// check off.
type ThrottleConfig struct {
	// ClientFailures failed attempts per client id per ClientWindow.
	// Default 10 per minute.
	ClientFailures int
	ClientWindow   time.Duration
	// AddressFailures failed attempts per remote address per
	// AddressWindow. Default 30 per minute. IPv6 addresses count per /64,
	// the block one host or site usually holds.
	AddressFailures int
	AddressWindow   time.Duration
	// MaxEntries bounds the memory of each of the two tables. Default 65536.
	MaxEntries int
}

func (c *ThrottleConfig) normalize() {
	if c.ClientFailures == 0 {
		c.ClientFailures = 10
	}
	if c.ClientWindow <= 0 {
		c.ClientWindow = time.Minute
	}
	if c.AddressFailures == 0 {
		c.AddressFailures = 30
	}
	if c.AddressWindow <= 0 {
		c.AddressWindow = time.Minute
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = 65536
	}
}

// Throttle counts failed attempts in fixed windows per key (a client id,
// or another name an endpoint authenticates) and per remote address. Only
// failures are counted and only failures are throttled: a caller with the
// right credentials is never refused, so no one can lock a partner out by
// failing in its name (the credentials are 256-bit secrets: letting them
// through gains a guesser nothing). Memory is bounded: each table is
// sharded, and a full shard first drops its expired windows, then an
// arbitrary entry.
type Throttle struct {
	clients, addrs *failTable
}

// NewThrottle returns a throttle for cfg (defaults filled in).
func NewThrottle(cfg ThrottleConfig, clock func() time.Time) *Throttle {
	cfg.normalize()
	if clock == nil {
		clock = time.Now
	}
	return &Throttle{
		clients: newFailTable(cfg.ClientFailures, cfg.ClientWindow, cfg.MaxEntries, clock),
		addrs:   newFailTable(cfg.AddressFailures, cfg.AddressWindow, cfg.MaxEntries, clock),
	}
}

// Failed records a failed attempt for key from addr and reports how long
// the caller must wait before trying again: 0 means answer the failure as
// it is (401), more means answer 429 with Retry-After. An attempt made
// while key or addr is over its limit is not counted again, so the window
// ends on time. Empty keys and addresses are not counted.
func (t *Throttle) Failed(key, addr string) time.Duration {
	if len(key) > maxThrottleKey {
		// No client id is longer (ValidID): what a caller invents beyond
		// that shares one budget instead of filling memory.
		key = key[:maxThrottleKey]
	}
	a := AddressKey(addr)
	if wait := max(t.clients.wait(key), t.addrs.wait(a)); wait > 0 {
		return wait
	}
	t.clients.fail(key)
	t.addrs.fail(a)
	return 0
}

// AddressKey is the per-address throttle's key for a remote address: an
// IPv4 address (also when written IPv4-mapped) as it is, an IPv6 address
// as its /64 (a single host usually holds a whole /64, so counting its
// addresses one by one would give it 2^64 budgets). Anything that is not
// an IP address is its own key.
func AddressKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

const throttleShards = 32

// maxThrottleKey bounds the keys the throttle keeps: the longest client id.
const maxThrottleKey = 64

type failWindow struct {
	start time.Time
	count int
}

type failShard struct {
	mu sync.Mutex
	m  map[string]*failWindow
}

type failTable struct {
	limit    int
	window   time.Duration
	perShard int
	clock    func() time.Time
	seed     maphash.Seed
	shards   [throttleShards]failShard
}

func newFailTable(limit int, window time.Duration, maxEntries int, clock func() time.Time) *failTable {
	t := &failTable{limit: limit, window: window, perShard: max(1, maxEntries/throttleShards), clock: clock, seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = map[string]*failWindow{}
	}
	return t
}

func (t *failTable) shard(k string) *failShard {
	return &t.shards[maphash.String(t.seed, k)%throttleShards]
}

func (t *failTable) wait(k string) time.Duration {
	if k == "" || t.limit < 0 {
		return 0
	}
	sh := t.shard(k)
	now := t.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w, ok := sh.m[k]
	if !ok || w.count < t.limit {
		return 0
	}
	left := w.start.Add(t.window).Sub(now)
	if left <= 0 {
		delete(sh.m, k)
		return 0
	}
	return left
}

func (t *failTable) fail(k string) {
	if k == "" || t.limit < 0 {
		return
	}
	sh := t.shard(k)
	now := t.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w, ok := sh.m[k]
	if ok && now.Sub(w.start) >= t.window {
		w.start, w.count = now, 0
	}
	if !ok {
		if len(sh.m) >= t.perShard {
			t.evict(sh, now)
		}
		w = &failWindow{start: now}
		sh.m[k] = w
	}
	w.count++
}

// evict makes room in a full shard: expired windows go first, then, if
// none expired, one arbitrary entry. Called with the shard locked.
func (t *failTable) evict(sh *failShard, now time.Time) {
	for k, w := range sh.m {
		if now.Sub(w.start) >= t.window {
			delete(sh.m, k)
		}
	}
	if len(sh.m) < t.perShard {
		return
	}
	for k := range sh.m {
		delete(sh.m, k)
		return
	}
}

// RetryAfterSeconds rounds a wait up to whole seconds (at least 1), the
// value of a Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
