package webhooks

import (
	"net/http"
	"strings"
	"testing"
)

// A partner's receiver answers with megabytes of response headers: the
// gateway reads at most maxResponseHeaders of them (net/http's default for
// a client is 10 MiB, held in memory by every worker at once), and such an
// answer is a failed attempt, recorded with the reason.
func TestDeliveryReceiverHugeResponseHeaders(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	s := newService(t, testOptions(db, clock))
	rcv := newReceiver(t, always(200))
	big := strings.Repeat("x", 8<<10)
	inner := rcv.Config.Handler
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 128 { // 1 MiB of headers
			w.Header().Add("X-Pad", big[:len(big)-i])
		}
		inner.ServeHTTP(w, r)
	})
	subscribe(t, s, "p1", rcv.URL, EventInboundStatus)
	if n, _ := s.Publish("p1", []Event{{EventInboundStatus, "IN-1"}}, nil); n != 1 {
		t.Fatalf("queued %d, want 1", n)
	}
	runDue(t, s)
	if len(rcv.Hits()) != 1 {
		t.Fatalf("the receiver got %d attempts, want 1", len(rcv.Hits()))
	}
	qs, _ := s.Queued(ListFilter{})
	if len(qs) != 1 || len(qs[0].Log) != 1 || !strings.Contains(qs[0].Log[0].Error, "header") {
		t.Fatalf("queue %+v, want the delivery queued again with a failed attempt naming the response headers", qs)
	}
}
