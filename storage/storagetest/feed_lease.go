package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// leaseTTL is the lease duration the behaviours ask for.
const leaseTTL = 5 * time.Second

// leaser is the feed store name of b as a feed.Leaser (every backend's is).
func leaser(t *testing.T, b Backend, name string) feed.Leaser {
	t.Helper()
	l, ok := b.Feed(name).(feed.Leaser)
	if !ok {
		t.Fatalf("the feed store %T is not a feed.Leaser", b.Feed(name))
	}
	return l
}

// acquire takes or renews the lease of l at now, failing t on error.
func acquire(t *testing.T, l feed.Leaser, now time.Time) feed.Lease {
	t.Helper()
	got, err := l.AcquireLease(now, leaseTTL)
	if err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	return got
}

// peer is another gateway instance on b's data, or a skip for a backend
// one process holds alone.
func peer(t *testing.T, b Backend) Backend {
	t.Helper()
	if b.Peer == nil {
		t.Skip("one process holds this backend's data: no other instance can ask for the lease")
	}
	return b.Peer(t)
}

// cursorIs fails t unless the stored cursor of feed name is want.
func cursorIs(t *testing.T, b Backend, name, want, why string) {
	t.Helper()
	if got, err := b.Feed(name).Cursor(); err != nil || got != want {
		t.Fatalf("cursor = %q, %v; want %q: %s", got, err, want, why)
	}
}

var feedLeaseBehaviours = []Behaviour{
	{"feed lease/the first to ask holds it, a renewal keeps its token, and writes fenced by it commit", func(t *testing.T, b Backend) {
		l := leaser(t, b, "orders")
		first := acquire(t, l, t0)
		if !first.Held || first.Token == 0 {
			t.Fatalf("the first AcquireLease = %+v, want the lease held with a token", first)
		}
		renewed := acquire(t, l, t0.Add(time.Second))
		if !renewed.Held || renewed.Token != first.Token {
			t.Fatalf("a renewal = %+v, want it held with the same token %d", renewed, first.Token)
		}
		c := "7"
		if err := b.Feed("orders").Commit(b.Feed("orders").PageWrites(feed.PageWrites{Cursor: &c, Fence: first.Token})); err != nil {
			t.Fatalf("a commit fenced by the held lease: %v, want it stored", err)
		}
		cursorIs(t, b, "orders", "7", "the holder's fenced commit is stored")
	}},
	{"feed lease/writes fenced by a token that is not the lease's are refused and write nothing", func(t *testing.T, b Backend) {
		f := b.Feed("orders")
		held := acquire(t, leaser(t, b, "orders"), t0)
		c := "9"
		w := f.PageWrites(feed.PageWrites{Cursor: &c, Seen: []string{"ch1"}, SeenUntil: t0.Add(time.Hour), Fence: held.Token + 1})
		if err := f.Commit(w); !errors.Is(err, feed.ErrLeaseLost) {
			t.Fatalf("Commit fenced by another token: %v, want ErrLeaseLost", err)
		}
		err := b.Webhooks.Enqueue([]webhooks.QueueEntry{entry("whd_1", "P1", t0)}, w)
		if !errors.Is(err, feed.ErrLeaseLost) {
			t.Fatalf("Enqueue with writes fenced by another token: %v, want ErrLeaseLost", err)
		}
		cursorIs(t, b, "orders", "", "refused writes store no cursor")
		if q, err := readAll(b, nil); err != nil || len(q) != 0 {
			t.Fatalf("queue after a refused Enqueue: %q, %v; want it empty (the deliveries go with the writes)", records(q), err)
		}
	}},
	{"feed lease/another instance waits for a running lease and takes one that ran out, with a new token", func(t *testing.T, b Backend) {
		other := peer(t, b)
		a, o := leaser(t, b, "orders"), leaser(t, other, "orders")
		held := acquire(t, a, t0)
		if got := acquire(t, o, t0.Add(leaseTTL-time.Millisecond)); got.Held || got.Holder != held.Holder || !got.Until.Equal(t0.Add(leaseTTL)) {
			t.Fatalf("another instance's AcquireLease before the lease ran out = %+v, want it refused, naming holder %q until %s",
				got, held.Holder, t0.Add(leaseTTL))
		}
		took := acquire(t, o, t0.Add(leaseTTL))
		if !took.Held || took.Token == held.Token || took.Holder == held.Holder {
			t.Fatalf("another instance's AcquireLease once the lease ran out = %+v, want it held with a token other than %d", took, held.Token)
		}
		if back := acquire(t, a, t0.Add(leaseTTL+time.Second)); back.Held || back.Holder != took.Holder {
			t.Fatalf("the old holder's renewal after the takeover = %+v, want it refused, naming %q", back, took.Holder)
		}
		if other := acquire(t, leaser(t, b, "returns"), t0.Add(time.Second)); !other.Held {
			t.Fatalf("the lease of another feed = %+v, want it free for the asking", other)
		}
	}},
	{"feed lease/the old holder's page is refused after a takeover and writes nothing", func(t *testing.T, b Backend) {
		other := peer(t, b)
		old := acquire(t, leaser(t, b, "orders"), t0)
		took := acquire(t, leaser(t, other, "orders"), t0.Add(leaseTTL))
		c := "5"
		stale := b.Feed("orders").PageWrites(feed.PageWrites{Cursor: &c, Seen: []string{"ch1"}, SeenUntil: t0.Add(time.Hour), Fence: old.Token})
		err := b.Webhooks.Enqueue([]webhooks.QueueEntry{entry("whd_1", "P1", t0)}, stale)
		if !errors.Is(err, feed.ErrLeaseLost) {
			t.Fatalf("the old holder's Enqueue with its page's writes: %v, want ErrLeaseLost", err)
		}
		if err := b.Feed("orders").Commit(stale); !errors.Is(err, feed.ErrLeaseLost) {
			t.Fatalf("the old holder's Commit: %v, want ErrLeaseLost", err)
		}
		if q, err := readAll(b, nil); err != nil || len(q) != 0 {
			t.Fatalf("queue after the old holder's page: %q, %v; want it empty", records(q), err)
		}
		if seen, err := other.Feed("orders").Seen([]string{"ch1"}); err != nil || seen["ch1"] {
			t.Fatalf("Seen after the old holder's page = %v, %v; want ch1 not marked", seen, err)
		}
		mine := "6"
		fresh := other.Feed("orders").PageWrites(feed.PageWrites{Cursor: &mine, Fence: took.Token})
		if err := other.Webhooks.Enqueue([]webhooks.QueueEntry{entry("whd_2", "P1", t0)}, fresh); err != nil {
			t.Fatalf("the new holder's Enqueue: %v, want it stored", err)
		}
		cursorIs(t, other, "orders", "6", "the new holder's page is stored")
	}},
	{"feed lease/a released lease goes to the next instance at once", func(t *testing.T, b Backend) {
		other := peer(t, b)
		a := leaser(t, b, "orders")
		acquire(t, a, t0)
		if err := a.ReleaseLease(); err != nil {
			t.Fatal(err)
		}
		if got := acquire(t, leaser(t, other, "orders"), t0.Add(time.Second)); !got.Held {
			t.Fatalf("another instance's AcquireLease after the holder released it = %+v, want it held", got)
		}
		if err := a.ReleaseLease(); err != nil {
			t.Fatalf("a release by an instance that no longer holds the lease: %v, want nothing done", err)
		}
		if got := acquire(t, leaser(t, other, "orders"), t0.Add(2*time.Second)); !got.Held {
			t.Fatalf("the new holder's renewal after the old one released again = %+v, want the lease still its own", got)
		}
	}},
	{"feed lease/writes that end the lease (a reset) refuse the holder's page in flight", func(t *testing.T, b Backend) {
		other := peer(t, b)
		held := acquire(t, leaser(t, b, "orders"), t0)
		c := ""
		if err := other.Feed("orders").Commit(other.Feed("orders").PageWrites(feed.PageWrites{Cursor: &c, EndLease: true})); err != nil {
			t.Fatal(err)
		}
		late := "12"
		err := b.Feed("orders").Commit(b.Feed("orders").PageWrites(feed.PageWrites{Cursor: &late, Fence: held.Token}))
		if !errors.Is(err, feed.ErrLeaseLost) {
			t.Fatalf("the holder's page after another instance's reset: %v, want ErrLeaseLost", err)
		}
		again := acquire(t, leaser(t, b, "orders"), t0.Add(time.Second))
		if !again.Held || again.Token == held.Token {
			t.Fatalf("AcquireLease after the reset = %+v, want it held with a new token (so the reader reads the cursor again)", again)
		}
	}},
}
