package storagetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// claimer is b's queue as a webhooks.Claimer; a backend whose queue one
// process owns does not claim, and the behaviour is skipped.
func claimer(t *testing.T, b Backend) webhooks.Claimer {
	t.Helper()
	c, ok := b.Webhooks.(webhooks.Claimer)
	if !ok {
		t.Skip("the backend's queue does not claim (webhooks.Claimer): one process owns it")
	}
	return c
}

func claimIDs(t *testing.T, c webhooks.Claimer, req webhooks.ClaimRequest) []string {
	t.Helper()
	es, _, err := c.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids
}

// claimAll asks for every due delivery, at now, leased for a minute.
func claimAll(now time.Time) webhooks.ClaimRequest {
	return webhooks.ClaimRequest{Now: now, Lease: time.Minute, Max: 100, PerPartner: 100}
}

var claimBehaviours = []Behaviour{
	{"claim/due deliveries are claimed once, oldest first, at most PerPartner of a partner, none of Skip", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		enqueue(t, b, entry("whd_a1", "P1", t0.Add(-2*time.Second)), entry("whd_a2", "P1", t0.Add(-time.Second)),
			entry("whd_a3", "P1", t0), entry("whd_b1", "P2", t0), entry("whd_c1", "P3", t0.Add(-time.Hour)),
			entry("whd_late", "P2", t0.Add(time.Minute)))
		got := claimIDs(t, c, webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 10, PerPartner: 2, Skip: []string{"P3"}})
		if want := []string{"whd_a1", "whd_a2", "whd_b1"}; !slices.Equal(got, want) {
			t.Fatalf("Claim (2 per partner, P3 skipped) = %v, want %v", got, want)
		}
		if got := claimIDs(t, c, claimAll(t0)); !slices.Equal(got, []string{"whd_c1", "whd_a3"}) {
			t.Fatalf("a second Claim = %v, want only what the first left: whd_c1, whd_a3", got)
		}
	}},
	{"claim/the next due time is the first delivery not yet due", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		enqueue(t, b, entry("whd_now", "P1", t0), entry("whd_soon", "P2", t0.Add(time.Minute)))
		_, next, err := c.Claim(context.Background(), claimAll(t0))
		if err != nil || !next.Equal(t0.Add(time.Minute)) {
			t.Fatalf("Claim's next due = %v, %v; want %v", next, err, t0.Add(time.Minute))
		}
	}},
	{"claim/a retried delivery is not leased: it is claimed again when due", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		e := entry("whd_1", "P1", t0)
		enqueue(t, b, e)
		claimIDs(t, c, claimAll(t0))
		again := entry("whd_1", "P1", t0.Add(time.Second))
		if err := b.Webhooks.Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleRetry, Entry: again}}, []bool{false}); err != nil {
			t.Fatal(err)
		}
		if got := claimIDs(t, c, claimAll(t0.Add(time.Second))); !slices.Equal(got, []string{"whd_1"}) {
			t.Fatalf("Claim after the retry = %v, want whd_1", got)
		}
	}},
	{"claim/released deliveries are due again at once", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		e := entry("whd_1", "P1", t0)
		enqueue(t, b, e)
		claimIDs(t, c, claimAll(t0))
		if got := claimIDs(t, c, claimAll(t0)); len(got) != 0 {
			t.Fatalf("Claim of a claimed delivery = %v, want nothing", got)
		}
		if err := c.Release(context.Background(), [][]byte{e.Pos}); err != nil {
			t.Fatal(err)
		}
		if got := claimIDs(t, c, claimAll(t0)); !slices.Equal(got, []string{"whd_1"}) {
			t.Fatalf("Claim after the release = %v, want whd_1", got)
		}
	}},
	{"claim/a lease holds until it runs out, as renewed", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		e := entry("whd_1", "P1", t0)
		enqueue(t, b, e)
		claimIDs(t, c, claimAll(t0)) // until t0+1m
		if n, err := c.Renew(context.Background(), [][]byte{e.Pos}, t0.Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("Renew = %d, %v; want the one lease renewed", n, err)
		}
		if got := claimIDs(t, c, claimAll(t0.Add(30*time.Minute))); len(got) != 0 {
			t.Fatalf("Claim within the renewed lease = %v, want nothing", got)
		}
		if got := claimIDs(t, c, claimAll(t0.Add(time.Hour))); !slices.Equal(got, []string{"whd_1"}) {
			t.Fatalf("Claim when the renewed lease ran out = %v, want whd_1", got)
		}
	}},
	{"claim/a restarted instance claims what the stopped one held once its lease runs out", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		enqueue(t, b, entry("whd_1", "P1", t0))
		claimIDs(t, c, claimAll(t0)) // until t0+1m, then the instance stops
		r := claimer(t, b.Reopen(t))
		if got := claimIDs(t, r, claimAll(t0.Add(59*time.Second))); len(got) != 0 {
			t.Fatalf("the restarted instance's Claim within the lease = %v, want nothing", got)
		}
		if got := claimIDs(t, r, claimAll(t0.Add(time.Minute))); !slices.Equal(got, []string{"whd_1"}) {
			t.Fatalf("the restarted instance's Claim after the lease = %v, want whd_1", got)
		}
	}},
	{"claim/wake-ups follow queued deliveries", func(t *testing.T, b Backend) {
		c := claimer(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		wake, err := c.Wakeups(ctx, func(err error) { t.Logf("wake-ups: %v", err) })
		if err != nil {
			cancel()
			t.Fatalf("Wakeups: %v", err)
		}
		defer func() {
			cancel()
			for range wake { // until the listener stopped
			}
		}()
		enqueue(t, b, entry("whd_1", "P1", t0))
		select {
		case <-wake:
		case <-time.After(20 * time.Second): // a bound on a hang
			t.Fatal("no wake-up after a delivery was queued")
		}
	}},
}
