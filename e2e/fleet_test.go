package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// revokeBound is how soon a client disabled on one instance must be
// refused by every other instance.
const revokeBound = time.Second

// Three instances on one database act as one gateway: tokens, partners,
// revocations and subscriptions made through any of them hold on all, and
// the feed's events reach the partners whichever instance reads the feed
// and whichever delivers. The subtests share one fleet (they use different
// partners, events and receivers) and run in order.
func TestFleetActsAsOneGateway(t *testing.T) {
	t.Parallel()
	f := startFleet(t, fleetOptions{})
	a, b, c := f.byName("A"), f.byName("B"), f.byName("C")

	t.Run("a token from A opens B and C", func(t *testing.T) {
		tok := a.mustToken(t, "plain-client", fleetSecret)
		for _, in := range []*instance{a, b, c} {
			if s := in.products(t, tok); s != http.StatusOK {
				t.Errorf("A's token on instance %s: %d, want 200", in.Name, s)
			}
		}
	})

	t.Run("a partner created on A gets a token from C", func(t *testing.T) {
		var created struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		a.admin(t, "POST", "/fulfilment/partners", `{"id":"partner-fleet-new"}`, &created)
		start := time.Now()
		var status int
		var tok string
		for status != 200 && time.Since(start) < 5*time.Second {
			status, tok = c.token(t, created.ClientID, created.ClientSecret)
			time.Sleep(50 * time.Millisecond)
		}
		if status != 200 {
			t.Fatalf("the client of a partner created through A's admin API: C answered %d for 5s (401, then 429 once throttled: C does not know the client), want a token", status)
		}
		t.Logf("C issued the token %s after A created the partner", time.Since(start).Round(time.Millisecond))
		for _, in := range []*instance{a, b} {
			if s := in.products(t, tok); s != http.StatusOK {
				t.Errorf("C's token for the partner created on A, on instance %s: %d, want 200", in.Name, s)
			}
		}
	})

	t.Run("a client disabled on A is refused on C within 1s", func(t *testing.T) {
		var created struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		a.admin(t, "POST", "/fulfilment/partners", `{"id":"partner-fleet-revoked"}`, &created)
		var tok string
		whEventually(t, 5*time.Second, "a token from C for the partner created on A", func() bool {
			var status int
			status, tok = c.token(t, created.ClientID, created.ClientSecret)
			return status == 200
		})
		// C knew the new client; A and B learn of it through the database
		// within a second, usually within milliseconds: wait until every
		// instance accepts the token, so that each refusal below is the
		// disable's.
		for _, in := range []*instance{a, b, c} {
			whEventually(t, 5*time.Second, "the token before the disable accepted on instance "+in.Name, func() bool {
				return in.products(t, tok) == http.StatusOK
			})
		}
		asked := time.Now()
		a.admin(t, "POST", "/fulfilment/partners/partner-fleet-revoked/clients/"+created.ClientID+"/disable", "", nil)
		done := time.Now()
		refused := map[string]time.Duration{}
		for time.Since(done) < 5*time.Second && len(refused) < 2 {
			for _, in := range []*instance{b, c} {
				if _, ok := refused[in.Name]; !ok && in.products(t, tok) == http.StatusUnauthorized {
					refused[in.Name] = time.Since(done)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("disable answered by A in %s; refused after A's answer: %v", done.Sub(asked), refused)
		if s := a.products(t, tok); s != http.StatusUnauthorized {
			t.Errorf("the disabled client's token on A itself: %d, want 401", s)
		}
		for _, in := range []*instance{b, c} {
			d, ok := refused[in.Name]
			if !ok {
				t.Errorf("instance %s still accepted the disabled client's token 5s after A disabled it, want 401 within %s", in.Name, revokeBound)
			} else if d > revokeBound {
				t.Errorf("instance %s refused the disabled client's token %s after A disabled it, want within %s", in.Name, d, revokeBound)
			}
		}
	})

	t.Run("a subscription made on an instance that does not read the feed gets the events", func(t *testing.T) {
		reader := f.feedReader(t, 20*time.Second, time.Second)
		on := f.others(reader)[0]
		rcv := startFleetReceiver(t, f, fleetKeyCons)
		on.subscribe(t, on.mustToken(t, "cons-client", fleetSecret), rcv.URL, webhooks.EventOutboundStatus)
		var want []string
		for range 5 {
			want = append(want, "outbound.status-changed "+f.control("outbounds", `{"partner":"partner-cons"}`))
		}
		waitDelivered(t, rcv, want, 30*time.Second,
			fmt.Sprintf("subscribed on %s while %s reads the feed", on.Name, reader.Name))
	})

	t.Run("1000 events across the instances, none lost", func(t *testing.T) {
		rcv := startFleetReceiver(t, f, fleetKeyPlain)
		c.subscribe(t, c.mustToken(t, "plain-client", fleetSecret), rcv.URL, webhooks.EventAdjustmentPosted)
		// A first event proves the instance reading the feed knows the
		// subscription (it learns of it from the database): the 1000 are
		// about losing none, not about how soon a subscription spreads.
		// (A probe made before it does is never delivered: one a second.)
		whEventually(t, 30*time.Second, "a first event for the subscription made on C", func() bool {
			probe := "adjustment.posted " + f.control("adjustments", `{"partner":"partner-plain","products":["PROBE"]}`) + ":PROBE"
			for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if missing, _ := rcv.missing([]string{probe}); len(missing) == 0 {
					return true
				}
			}
			return false
		})
		var want []string
		for range 10 {
			products := make([]string, 100)
			for i := range products {
				products[i] = fmt.Sprintf("%q", fmt.Sprintf("P-%03d", i))
			}
			adj := f.control("adjustments", `{"partner":"partner-plain","products":[`+strings.Join(products, ",")+`]}`)
			for i := range 100 {
				want = append(want, fmt.Sprintf("adjustment.posted %s:P-%03d", adj, i))
			}
		}
		waitDelivered(t, rcv, want, 90*time.Second, "1000 events after the first")
		t.Logf("deliveries by instance: %v", rcv.deliveredBy())
	})
}

// waitDelivered waits until every event of want was delivered, then a
// little longer, and checks that none came under two x-hook-ids and none
// had a bad signature.
func waitDelivered(t *testing.T, r *fleetReceiver, want []string, within time.Duration, what string) {
	t.Helper()
	const stall = 30 * time.Second // no delivery for this long: nothing more will come
	deadline := time.Now().Add(within)
	lastMissing, progressed := len(want)+1, time.Now()
	for {
		missing, _ := r.missing(want)
		if len(missing) == 0 {
			break
		}
		if len(missing) < lastMissing {
			lastMissing, progressed = len(missing), time.Now()
		}
		if now := time.Now(); now.After(deadline) || now.Sub(progressed) > stall {
			t.Fatalf("%s: %d of %d events not delivered (waited %s, the last %s without a new one; deliveries by instance: %v), e.g. %v",
				what, len(missing), len(want), (within - deadline.Sub(now)).Round(time.Second), now.Sub(progressed).Round(time.Second),
				r.deliveredBy(), missing[:min(5, len(missing))])
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // a delivery under another id would arrive now
	_, split := r.missing(want)
	if len(split) > 0 {
		t.Errorf("%s: events delivered under more than one x-hook-id (a duplicate must repeat its id): %v", what, split)
	}
	if n := r.badSignatures(); n > 0 {
		t.Errorf("%s: %d deliveries with a bad signature", what, n)
	}
}
