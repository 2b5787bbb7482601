package pgstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func TestClaimTakesDueDeliveriesInScheduleOrder(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a := instance(t, dsn)
	late := due("whd_late", "P1", t0.Add(time.Minute))
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_c", "P1", t0.Add(-time.Second)), late,
		due("whd_b", "P2", t0.Add(-time.Minute)), due("whd_a", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	got := claim(t, a, t0, 10, time.Minute)
	if want := []string{"whd_b", "whd_c", "whd_a"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Claim at t0 = %v, want the deliveries due by t0 in schedule order %v (whd_late is not due)", ids(got), want)
	}
	if string(got[0].Record) != "record of whd_b" || got[0].PartnerID != "P2" || got[0].SubscriptionID != "sub_P2" {
		t.Errorf("claimed entry %+v, want whd_b's record, partner and subscription", got[0])
	}
}

func TestClaimTakesAtMostTheBatchSize(t *testing.T) {
	a := instance(t, migratedPool(t).Config().ConnString())
	var es []webhooks.QueueEntry
	for i := range 5 {
		es = append(es, due(fmt.Sprintf("whd_%d", i), "P1", t0))
	}
	if err := a.Webhooks().Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
	first, second := claim(t, a, t0, 3, time.Minute), claim(t, a, t0, 3, time.Minute)
	if !slices.Equal(ids(first), []string{"whd_0", "whd_1", "whd_2"}) || !slices.Equal(ids(second), []string{"whd_3", "whd_4"}) {
		t.Fatalf("two claims of 3 = %v then %v, want the first three then the two others", ids(first), ids(second))
	}
}

func TestAClaimedDeliveryIsNotClaimedByAnotherInstanceDuringItsLease(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, a, t0, 10, time.Minute); len(got) != 1 {
		t.Fatalf("A claimed %v, want whd_1", ids(got))
	}
	if got := claim(t, b, t0.Add(59*time.Second), 10, time.Minute); len(got) != 0 {
		t.Fatalf("B claimed %v within A's lease, want nothing", ids(got))
	}
}

func TestADeliveryWhoseLeaseRanOutIsClaimedByAnotherInstance(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	claim(t, a, t0, 10, time.Minute) // A dies holding it
	got := claim(t, b, t0.Add(time.Minute), 10, time.Minute)
	if !slices.Equal(ids(got), []string{"whd_1"}) {
		t.Fatalf("B's claim after A's lease ran out = %v, want whd_1 attempted again", ids(got))
	}
}

func TestTheOutcomeOfALostLeaseIsNotRecorded(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	e := due("whd_1", "P1", t0)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{e}, nil); err != nil {
		t.Fatal(err)
	}
	claim(t, a, t0, 10, time.Minute)
	claim(t, b, t0.Add(2*time.Minute), 10, time.Minute) // A was too slow: B holds it now
	later := due("whd_1", "P1", t0.Add(time.Hour))
	done := []bool{false}
	if err := a.Webhooks().Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleRetry, Entry: later}}, done); err != nil {
		t.Fatal(err)
	}
	if err := b.Webhooks().Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleDone}}, []bool{false}); err != nil {
		t.Fatal(err)
	}
	if q, d, err := b.Webhooks().Depth(); err != nil || q != 0 || d != 0 {
		t.Fatalf("after A's late retry and B's success: %d queued, %d dead (%v); want nothing left: B holds the lease, B's outcome counts", q, d, err)
	}
}

func TestSettlingEndsTheLease(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	e := due("whd_1", "P1", t0)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{e}, nil); err != nil {
		t.Fatal(err)
	}
	claim(t, a, t0, 10, time.Hour)
	again := due("whd_1", "P1", t0.Add(time.Second))
	if err := a.Webhooks().Settle([]webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleRetry, Entry: again}}, []bool{false}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, b, t0.Add(2*time.Second), 10, time.Hour); !slices.Equal(ids(got), []string{"whd_1"}) {
		t.Fatalf("B's claim of the retried delivery = %v, want whd_1: a retry is not leased", ids(got))
	}
}

func TestReleasedDeliveriesAreDueAtOnce(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0), due("whd_2", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	got := claim(t, a, t0, 10, time.Hour)
	if err := b.Release(context.Background(), [][]byte{got[0].Pos}); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(context.Background(), [][]byte{got[1].Pos}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, b, t0, 10, time.Hour); !slices.Equal(ids(got), []string{"whd_2"}) {
		t.Fatalf("B's claim = %v, want only whd_2: A released it, and B cannot release A's whd_1", ids(got))
	}
}

// TestInstancesClaimingAtOnceNeverShareADelivery: four instances claim
// batches from 400 due deliveries at once until none is left; each
// delivery must be claimed by exactly one of them.
func TestInstancesClaimingAtOnceNeverShareADelivery(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	const total, instances = 400, 4
	var es []webhooks.QueueEntry
	for i := range total {
		es = append(es, due(fmt.Sprintf("whd_%04d", i), "P1", t0))
	}
	if err := instance(t, dsn).Webhooks().Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
	claimed := make([][]string, instances)
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i := range instances {
		s := instance(t, dsn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, _, err := s.Claim(context.Background(), webhooks.ClaimRequest{Now: t0, Lease: time.Hour, Max: 7, PerPartner: 7})
				if err != nil || len(got) == 0 {
					errs[i] = err
					return
				}
				claimed[i] = append(claimed[i], ids(got)...)
			}
		}()
	}
	wg.Wait()
	count := map[string]int{}
	for i := range instances {
		if errs[i] != nil {
			t.Errorf("instance %d: %v", i, errs[i])
		}
		for _, id := range claimed[i] {
			count[id]++
		}
	}
	for _, e := range es {
		if count[e.ID] != 1 {
			t.Errorf("%s was claimed %d times, want exactly once", e.ID, count[e.ID])
		}
	}
}

func TestClaimTakesAtMostPerPartnerOfEachPartner(t *testing.T) {
	a := instance(t, migratedPool(t).Config().ConnString())
	var es []webhooks.QueueEntry
	for i := range 5 {
		es = append(es, due(fmt.Sprintf("whd_a%d", i), "P1", t0.Add(-time.Hour+time.Duration(i))))
	}
	es = append(es, due("whd_b0", "P2", t0), due("whd_b1", "P2", t0.Add(time.Nanosecond-time.Second)))
	if err := a.Webhooks().Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
	got := claimReq(t, a, webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 10, PerPartner: 2})
	if want := []string{"whd_a0", "whd_a1", "whd_b1", "whd_b0"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Claim of 2 per partner = %v, want P1's two oldest and P2's two, in schedule order %v", ids(got), want)
	}
}

// TestABacklogAtTheHeadDoesNotHideAnotherPartner: P1's due deliveries fill
// the head of the schedule far beyond the claim's size; P2's one delivery
// behind them is claimed all the same.
func TestABacklogAtTheHeadDoesNotHideAnotherPartner(t *testing.T) {
	a := instance(t, migratedPool(t).Config().ConnString())
	var es []webhooks.QueueEntry
	for i := range 300 {
		es = append(es, due(fmt.Sprintf("whd_a%03d", i), "P1", t0.Add(-time.Hour)))
	}
	es = append(es, due("whd_b", "P2", t0))
	if err := a.Webhooks().Enqueue(es, nil); err != nil {
		t.Fatal(err)
	}
	got := claimReq(t, a, webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 20, PerPartner: 10})
	if len(got) != 11 || !slices.Contains(ids(got), "whd_b") {
		t.Fatalf("Claim (20, 10 per partner) = %v, want ten of P1's and P2's whd_b", ids(got))
	}
	got = claimReq(t, a, webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 20, PerPartner: 10})
	if len(got) != 10 {
		t.Fatalf("a second claim = %v, want the next ten of P1's", ids(got))
	}
}

func TestClaimSkipsTheNamedPartners(t *testing.T) {
	a := instance(t, migratedPool(t).Config().ConnString())
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_a", "P1", t0), due("whd_b", "P2", t0),
		due("whd_c", "P3", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	got := claimReq(t, a, webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 10, PerPartner: 10, Skip: []string{"P1", "P3"}})
	if !slices.Equal(ids(got), []string{"whd_b"}) {
		t.Fatalf("Claim skipping P1 and P3 = %v, want only P2's whd_b", ids(got))
	}
}

func TestClaimTellsWhenTheNextDeliveryIsDue(t *testing.T) {
	a := instance(t, migratedPool(t).Config().ConnString())
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_now", "P1", t0), due("whd_later", "P1", t0.Add(time.Minute)),
		due("whd_last", "P2", t0.Add(time.Hour))}, nil); err != nil {
		t.Fatal(err)
	}
	_, next, err := a.Claim(context.Background(), webhooks.ClaimRequest{Now: t0, Lease: time.Minute, Max: 10, PerPartner: 10})
	if err != nil || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Claim's next due = %v (%v), want %v: whd_later's", next, err, t0.Add(time.Minute))
	}
	_, next, err = a.Claim(context.Background(), webhooks.ClaimRequest{Now: t0.Add(2 * time.Hour), Lease: time.Minute, Max: 10, PerPartner: 10})
	if err != nil || !next.IsZero() {
		t.Fatalf("Claim's next due with everything claimed = %v (%v), want none", next, err)
	}
}

func TestRenewingKeepsTheLeaseFromAnotherInstance(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	got := claim(t, a, t0, 10, time.Minute)
	if n, err := b.Renew(context.Background(), [][]byte{got[0].Pos}, t0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("B's renewal of A's lease = %d (%v), want none renewed", n, err)
	}
	if n, err := a.Renew(context.Background(), [][]byte{got[0].Pos}, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("A's renewal = %d (%v), want its one lease renewed", n, err)
	}
	if got := claim(t, b, t0.Add(30*time.Minute), 10, time.Minute); len(got) != 0 {
		t.Fatalf("B claimed %v after A's first lease ran out but within the renewed one, want nothing", ids(got))
	}
	if got := claim(t, b, t0.Add(time.Hour), 10, time.Minute); !slices.Equal(ids(got), []string{"whd_1"}) {
		t.Fatalf("B's claim after the renewed lease ran out = %v, want whd_1", ids(got))
	}
}
