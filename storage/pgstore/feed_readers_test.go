package pgstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Two gateway instances on one database, each with its own feed reader of
// the same WMS feed: the simulator's, on loopback.

var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestOnlyTheLeaseHolderReadsTheFeed(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(3)
	a := newInstance(t, "a", dsn, w, c.Now, 100)
	b := newInstance(t, "b", dsn, w, c.Now, 100)

	pollUntilCaughtUp(t, a, 5)
	if wait := b.feed.Poll(context.Background()); wait != feed.LeaseRenew {
		t.Fatalf("the second reader's poll returned %v, want it to wait %v for the lease", wait, feed.LeaseRenew)
	}
	if n := w.requestsOf("b"); n != 0 {
		t.Errorf("the reader without the lease sent %d feed requests, want none", n)
	}
	if n := w.requestsOf("a"); n == 0 {
		t.Errorf("the lease holder sent no feed request")
	}
	eachOnce(t, queuedIDs(t, dsn), 3, "only the holder read the three changes")

	ra, rb := a.feed.Status().ReaderStatus, b.feed.Status().ReaderStatus
	if ra == nil || !ra.ReaderHere || ra.Reader != a.store.Instance() {
		t.Errorf("the holder's status names the reader %+v, want this instance (%s)", ra, a.store.Instance())
	}
	if rb == nil || rb.ReaderHere || rb.Reader != a.store.Instance() || rb.LeaseUntil == nil || !rb.LeaseUntil.Equal(start.Add(feed.LeaseTTL)) {
		t.Errorf("the other instance's status names the reader %+v, want %s until %s", rb, a.store.Instance(), start.Add(feed.LeaseTTL))
	}
	js, err := json.Marshal(b.feed.Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"reader":"` + a.store.Instance() + `"`, `"reader_here":false`, `"lease_until":"2030-01-02T03:04:10Z"`} {
		if !strings.Contains(string(js), field) {
			t.Errorf("the other instance's status (admin API, CLI) %s lacks %s", js, field)
		}
	}
	if lag := b.feed.Status().LagSeconds; lag != 0 {
		t.Errorf("the instance that does not read shows a lag of %vs, want none (the holder's lag is the feed's)", lag)
	}
}

func TestAnotherInstanceTakesOverWhenTheHolderDiesWithoutReleasing(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(4)
	a := newInstance(t, "a", dsn, w, c.Now, 2)
	b := newInstance(t, "b", dsn, w, c.Now, 2)

	if wait := a.feed.Poll(context.Background()); wait != 0 {
		t.Fatalf("the holder's first poll returned %v, want 0 (a full page: read on)", wait)
	}
	eachOnce(t, queuedIDs(t, dsn), 2, "the holder read its first page of two")
	// a dies here: it neither polls nor releases the lease.

	c.Advance(feed.LeaseTTL - time.Millisecond)
	if wait := b.feed.Poll(context.Background()); wait != feed.LeaseRenew || w.requestsOf("b") != 0 {
		t.Fatalf("a poll before the dead holder's lease ran out: wait %v and %d requests, want %v and none",
			wait, w.requestsOf("b"), feed.LeaseRenew)
	}
	c.Advance(time.Millisecond)
	pollUntilCaughtUp(t, b, 5)
	if r := b.feed.Status().ReaderStatus; r == nil || !r.ReaderHere {
		t.Fatalf("after the lease ran out the other instance's reader is %+v, want this instance", r)
	}
	eachOnce(t, queuedIDs(t, dsn), 4, "the new holder read on from the dead holder's cursor: no gap, nothing twice")
}

func TestAClosedHolderHandsTheFeedOverAtOnce(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(2)
	a := newInstance(t, "a", dsn, w, c.Now, 100)
	b := newInstance(t, "b", dsn, w, c.Now, 100)
	pollUntilCaughtUp(t, a, 5)
	if err := a.feed.Close(); err != nil {
		t.Fatal(err)
	}
	w.outbounds(1)
	pollUntilCaughtUp(t, b, 5) // the clock has not moved: only a release frees the lease
	if r := b.feed.Status().ReaderStatus; r == nil || !r.ReaderHere {
		t.Fatalf("after the holder closed, the other instance's reader is %+v, want this instance", r)
	}
	eachOnce(t, queuedIDs(t, dsn), 3, "the next instance read on after the closed holder's cursor")
}

// A holder paused in the middle of a page (after it looked up which
// changes are done, before it queued their events) loses the lease; the new
// holder reads the same page and queues it; when the old one goes on, its
// page is refused: every event is queued once, under the id the new holder
// gave it.
func TestAStaleHoldersPageIsRefusedAndEachEventIsQueuedOnce(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(3)
	a := newInstance(t, "a", dsn, w, c.Now, 100)
	b := newInstance(t, "b", dsn, w, c.Now, 100)

	arrived, release := a.pub.pause(t)
	polled := make(chan time.Duration, 1)
	go func() { polled <- a.feed.Poll(context.Background()) }()
	<-arrived // a holds the lease, has read the page and is about to queue it

	c.Advance(feed.LeaseTTL) // a is paused past its lease
	pollUntilCaughtUp(t, b, 5)
	taken := queuedIDs(t, dsn)
	eachOnce(t, taken, 3, "the new holder read the page")

	c.Advance(time.Millisecond) // what the stale holder would queue is due later: rows of its own
	release()
	if wait := <-polled; wait != feed.LeaseRenew {
		t.Errorf("the stale holder's poll returned %v, want it to wait %v for the lease (its page refused)", wait, feed.LeaseRenew)
	}
	after := queuedIDs(t, dsn)
	eachOnce(t, after, 3, "the stale holder's page was refused")
	for id := range after {
		if taken[id] != 1 {
			t.Errorf("delivery %s was queued by the stale holder, want only the new holder's ids", id)
		}
	}
	st := a.feed.Status()
	if st.ReaderStatus == nil || st.ReaderHere || st.Reader != b.store.Instance() || st.EventsProduced != 0 {
		t.Errorf("the stale holder's status: reader %+v, %d events; want it not reading, naming %s, no events",
			st.ReaderStatus, st.EventsProduced, b.store.Instance())
	}
	if bc := b.feed.Status().Cursor; bc == "" {
		t.Errorf("the new holder's cursor is empty, want it past the page")
	}
}

// A reset on an instance that does not read the feed ends the holder's
// lease: the holder's next page is refused, and it reads on from the reset
// cursor once it has the lease again.
func TestAResetOnAnotherInstanceMovesTheHoldersCursor(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(2)
	a := newInstance(t, "a", dsn, w, c.Now, 100)
	b := newInstance(t, "b", dsn, w, c.Now, 100)
	pollUntilCaughtUp(t, a, 5)
	before := queuedIDs(t, dsn)
	if err := b.feed.Reset("", true); err != nil {
		t.Fatal(err)
	}
	c.Advance(feed.LeaseRenew) // a renews its lease: it finds it ended
	pollUntilCaughtUp(t, a, 5)
	if st := a.feed.Status(); st.ReaderStatus == nil || !st.ReaderHere || st.EventsProduced != 4 {
		t.Fatalf("the holder after a reset elsewhere: reader %+v, %d events; want it reading, the two changes read again (4 events in all)",
			st.ReaderStatus, st.EventsProduced)
	}
	after := queuedIDs(t, dsn)
	if len(after) != len(before) {
		t.Errorf("%d delivery ids after the reset, want the %d there were (the changes read again keep their x-hook-ids)", len(after), len(before))
	}
	for id := range before {
		if after[id] != 2 {
			t.Errorf("delivery %s is queued %d times after the reset, want twice (once more, under the same id)", id, after[id])
		}
	}
}

// The readers' own loops, on the real clock: the holder renews its lease
// while it runs; cut off from the database (its pool closed) it can no
// longer renew it, and the other instance takes the feed over and reads on
// from its cursor.
func TestTheRunningHolderKeepsTheFeedUntilCutOffThenAnotherReadsOn(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease to run out on the real clock")
	}
	dsn, w := pgstore.MigratedDatabase(t), newWarehouse(t)
	w.outbounds(2)
	a := newInstance(t, "a", dsn, w, time.Now, 100)
	a.feed.Start()
	pgstore.WaitUntil(t, "the first reader to read the two changes", func() bool { return len(queuedIDs(t, dsn)) == 2 })
	b := newInstance(t, "b", dsn, w, time.Now, 100)
	b.feed.Start()

	time.Sleep(feed.LeaseTTL + feed.LeaseRenew) // longer than one lease: a must renew it
	if st := b.feed.Status(); st.ReaderStatus == nil || st.ReaderHere || st.Reader != a.store.Instance() {
		t.Fatalf("while the holder runs the other instance shows reader %+v, want %s: the holder renews its lease", st.ReaderStatus, a.store.Instance())
	}
	if n := w.requestsOf("b"); n != 0 {
		t.Fatalf("the instance without the lease sent %d feed requests, want none", n)
	}

	a.pool.Close() // a is cut off from the database
	w.outbounds(1)
	pgstore.WaitUntil(t, "the other instance to take the feed over", func() bool {
		st := b.feed.Status()
		return st.ReaderStatus != nil && st.ReaderHere
	})
	pgstore.WaitUntil(t, "the new holder to read the new change", func() bool { return len(queuedIDs(t, dsn)) == 3 })
	eachOnce(t, queuedIDs(t, dsn), 3, "the new holder read on from the old holder's cursor")
}

// A reload that stops polling the feed on the holder (push only) hands the
// lease to the instances that still poll it, before it runs out.
func TestAHolderThatNoLongerPollsHandsTheFeedOver(t *testing.T) {
	dsn, w, c := pgstore.MigratedDatabase(t), newWarehouse(t), pgstore.NewTestClock(start)
	w.outbounds(1)
	a := newInstance(t, "a", dsn, w, c.Now, 100)
	b := newInstance(t, "b", dsn, w, c.Now, 100)
	pollUntilCaughtUp(t, a, 5)
	a.feed.Start() // its lease keeper runs; the shared clock stands still, so the lease never runs out
	if err := a.feed.Apply(feed.Settings{Publisher: a.pub, Partners: knownPartner}); err != nil {
		t.Fatal(err)
	}
	w.outbounds(1)
	pgstore.WaitUntil(t, "the instance that still polls to take the feed over", func() bool {
		b.feed.Poll(context.Background())
		st := b.feed.Status()
		return st.ReaderStatus != nil && st.ReaderHere
	})
	pollUntilCaughtUp(t, b, 5)
	eachOnce(t, queuedIDs(t, dsn), 2, "the instance that took over read on from the cursor")
}
