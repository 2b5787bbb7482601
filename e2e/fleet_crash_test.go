package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// takeoverBound is how soon another instance must read a feed whose
// reader died.
const takeoverBound = 10 * time.Second

// kill -9 of the instance reading the feed, in the middle of a stream of
// changes: another instance reads on within 10 s, only one reads at a
// time, and every event arrives, each under one x-hook-id.
func TestFleetFeedReaderKilledMidStream(t *testing.T) {
	t.Parallel()
	// Small pages answered slowly: the reader is always part-way.
	f := startFleet(t, fleetOptions{feedPage: 5, feedDelay: 50 * time.Millisecond})
	rcv := startFleetReceiver(t, f, fleetKeyPlain)
	a := f.byName("A")
	a.subscribe(t, a.mustToken(t, "plain-client", fleetSecret), rcv.URL, webhooks.EventAdjustmentPosted)
	reader := f.feedReader(t, 20*time.Second, time.Second)

	stream := startChangeStream(f, 25*time.Millisecond, func() ([]string, error) {
		adj, err := f.tryControl("adjustments", `{"partner":"partner-plain","products":["A","B"]}`)
		return []string{"adjustment.posted " + adj + ":A", "adjustment.posted " + adj + ":B"}, err
	})
	time.Sleep(2 * time.Second)
	if n := reader.tap.polledSince(time.Now().Add(-time.Second)); n == 0 {
		t.Fatalf("instance %s stopped reading the feed before it was killed", reader.Name)
	}
	reader.Kill9()
	killed := time.Now()

	var next *instance
	var took time.Duration
	deadline := killed.Add(takeoverBound + 5*time.Second)
	for next == nil && time.Now().Before(deadline) {
		for _, in := range f.others(reader) {
			if p := in.tap.firstPollAfter(killed); !p.IsZero() {
				next, took = in, p.Sub(killed)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if next == nil {
		stream.finish(t)
		t.Fatalf("no instance read the feed within %s of killing its reader %s (want within %s)",
			takeoverBound+5*time.Second, reader.Name, takeoverBound)
	}
	t.Logf("instance %s read the feed %s after %s was killed", next.Name, took.Round(time.Millisecond), reader.Name)
	if took > takeoverBound {
		t.Errorf("instance %s took the feed over %s after its reader died, want within %s", next.Name, took, takeoverBound)
	}
	time.Sleep(2 * time.Second) // the stream goes on under the new reader
	want := stream.finish(t)
	if got := f.feedReader(t, 5*time.Second, time.Second); got != next {
		t.Errorf("instance %s reads the feed after the takeover by %s", got.Name, next.Name)
	}
	var st struct {
		ReaderHere bool `json:"reader_here"`
	}
	whEventually(t, 5*time.Second, "GET /fulfilment/feeds/wms of "+next.Name+", which reads the feed, saying reader_here", func() bool {
		next.admin(t, "GET", "/fulfilment/feeds/wms", "", &st)
		return st.ReaderHere
	})
	waitDelivered(t, rcv, want, 60*time.Second, fmt.Sprintf("%d events across the takeover", len(want)))
}

// kill -9 of an instance whose claimed deliveries are in flight (the
// receiver holds the requests): once their lease runs out, the other
// instances deliver them, under the same x-hook-ids.
func TestFleetDeliveriesOfAKilledInstanceAreDeliveredByTheOthers(t *testing.T) {
	t.Parallel()
	// A short attempt timeout gives a short lease (the dispatcher's lease is
	// a few attempt timeouts); the requests are held for less than it.
	f := startFleet(t, fleetOptions{hookTimeout: "5s"})
	rcv := startFleetReceiver(t, f, fleetKeyPlain)
	a := f.byName("A")
	a.subscribe(t, a.mustToken(t, "plain-client", fleetSecret), rcv.URL, webhooks.EventAdjustmentPosted)
	rcv.hold()
	var want []string
	for range 4 {
		adj := f.control("adjustments", `{"partner":"partner-plain","products":["P1","P2","P3","P4","P5","P6","P7","P8","P9","P10"]}`)
		for i := 1; i <= 10; i++ {
			want = append(want, fmt.Sprintf("adjustment.posted %s:P%d", adj, i))
		}
	}
	whEventually(t, 20*time.Second, "deliveries held at the receiver", func() bool { return len(rcv.heldBy()) > 0 })
	time.Sleep(time.Second) // let every instance that claims take its share
	held := rcv.heldBy()
	if ids := held[""]; len(ids) > 0 {
		t.Fatalf("%d held requests came from no instance of the fleet (or /proc could not tell): %v", len(ids), held)
	}
	var victim *instance
	for _, in := range f.inst {
		if victim == nil || len(held[in.Name]) > len(held[victim.Name]) {
			victim = in
		}
	}
	lost := held[victim.Name]
	t.Logf("in flight when killing %s: %v", victim.Name, held)
	victim.Kill9()
	killed := time.Now()
	// Its requests end with its connections; only then are the others'
	// answered (a request of the dead instance must not count as delivered).
	whEventually(t, 10*time.Second, "the killed "+victim.Name+"'s held requests ending with its connections", func() bool {
		return len(rcv.heldBy()[victim.Name]) == 0
	})
	rcv.release()

	waitDelivered(t, rcv, want, 90*time.Second, fmt.Sprintf("the %d events, %d of them in flight at the killed %s", len(want), len(lost), victim.Name))
	for _, id := range lost {
		from := rcv.sendersOf(id)
		if len(from) == 0 {
			t.Errorf("delivery %s, in flight at the killed %s, was never delivered", id, victim.Name)
		}
		for _, s := range from {
			if s == victim.Name || s == "" {
				t.Errorf("delivery %s was answered 200 to %q, want one of the surviving instances", id, s)
			}
		}
	}
	t.Logf("all delivered %s after the kill; deliveries by instance: %v", time.Since(killed).Round(time.Second), rcv.deliveredBy())
}

// changeStream makes changes in the simulator at a steady pace until
// finished, and collects the events they must give.
type changeStream struct {
	mu   sync.Mutex
	want []string
	err  error
	stop chan struct{}
	done chan struct{}
}

func startChangeStream(f *fleet, every time.Duration, change func() ([]string, error)) *changeStream {
	s := &changeStream{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			evs, err := change()
			s.mu.Lock()
			if err != nil {
				s.err = err
				s.mu.Unlock()
				return
			}
			s.want = append(s.want, evs...)
			s.mu.Unlock()
		}
	}()
	return s
}

// finish stops the stream and returns the events its changes must give;
// it fails the test when a change could not be made.
func (s *changeStream) finish(t *testing.T) []string {
	t.Helper()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		t.Fatalf("making changes in the simulator: %v", s.err)
	}
	return s.want
}
