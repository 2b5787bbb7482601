package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// receiverAddr is a receiver's listening address.
func receiverAddr(t *testing.T, r *receiver) netip.AddrPort {
	t.Helper()
	return r.Listener.Addr().(*net.TCPAddr).AddrPort()
}

// forbid returns the test policy (loopback allowed) with addr forbidden as
// a listener of the gateway.
func forbid(addr netip.AddrPort) *netpolicy.Policy {
	p := loopbackPolicy()
	p.Forbidden = []netpolicy.ForbiddenTarget{{Addr: addr.Addr(), Ports: netpolicy.PortRange{First: addr.Port(), Last: addr.Port()}}}
	return p
}

// A subscription to one of the gateway's own listeners is refused at
// registration although its network is allowed, with the same answer as
// any refused host.
func TestSubscriptionToTheGatewayItselfRefused(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	admin := newReceiver(t, always(200)) // stands for the admin endpoint
	o.Policy = forbid(receiverAddr(t, admin))
	s := newService(t, o)
	port := admin.URL[strings.LastIndex(admin.URL, ":"):]
	for _, u := range []string{admin.URL + "/stop", "http://localhost" + port + "/stop", "http://127.0.0.2" + port + "/load"} {
		_, _, err := s.Subscriptions().Create(context.Background(), "p1", u, EventLabelStatus)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "notificationUrl" || ve.Reason != hostNotAllowed {
			t.Errorf("%s: %v, want the host refusal", u, err)
		}
	}
	if l, _ := s.Subscriptions().List("p1"); len(l) != 0 {
		t.Fatalf("stored %+v, want nothing", l)
	}
}

// A delivery queued to an address that has become one of the gateway's
// listeners (the admin endpoint moved there after a restart) is never
// sent: the attempt is refused on the address dialled, recorded as a
// failure naming the reason, and retried like any failure.
func TestQueuedDeliveryToTheGatewayItselfNeverSent(t *testing.T) {
	db := openDB(t, t.TempDir())
	o := testOptions(db, newFakeClock())
	s := newService(t, o)
	admin := newReceiver(t, always(200))
	subscribe(t, s, "p1", admin.URL+"/stop", EventLabelStatus)
	s.Publish("p1", []Event{{EventLabelStatus, "L1"}}, nil)

	o.Policy = forbid(receiverAddr(t, admin))
	reconfigure(t, s, o)
	if n := runDue(t, s); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
	if hits := len(admin.Hits()); hits != 0 {
		t.Fatalf("the gateway's own listener got %d requests, want 0", hits)
	}
	qs, _ := s.Queued(ListFilter{})
	if len(qs) != 1 || len(qs[0].Log) != 1 || !strings.Contains(qs[0].Log[0].Error, "the gateway's own listener") {
		t.Fatalf("queued %+v, want the delivery kept with a refused attempt naming the gateway's own listener", qs)
	}
}

// An exemption for one partner applies to that partner only, at
// registration and at every attempt, even where the other partner's
// delivery could ride on a kept-alive connection dialled for the first.
func TestPartnerScopedExemption(t *testing.T) {
	db := openDB(t, t.TempDir())
	clock := newFakeClock()
	o := testOptions(db, clock)
	s := newService(t, o)
	rcv := newReceiver(t, always(200))
	subscribe(t, s, "acme", rcv.URL+"/a", EventLabelStatus)
	subscribe(t, s, "globex", rcv.URL+"/g", EventLabelStatus) // while loopback was open to all

	addr := receiverAddr(t, rcv)
	o.Policy = &netpolicy.Policy{Allow: []netpolicy.AllowRule{{Networks: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)},
		Ports: []netpolicy.PortRange{{First: addr.Port(), Last: addr.Port()}}, Partners: []string{"acme"}}}}
	reconfigure(t, s, o)
	if _, _, err := s.Subscriptions().Create(context.Background(), "globex", rcv.URL+"/g2", EventLabelStatus); err == nil {
		t.Fatal("globex registered a target exempted for acme only")
	}
	subscribe(t, s, "acme", rcv.URL+"/a2", EventLabelStatus)

	s.Publish("acme", []Event{{EventLabelStatus, "A1"}}, nil)
	runDue(t, s) // leaves an idle keep-alive connection to rcv
	if n := len(rcv.Hits()); n != 2 {
		t.Fatalf("acme's receiver got %d requests, want 2", n)
	}
	s.Publish("globex", []Event{{EventLabelStatus, "G1"}}, nil)
	runDue(t, s)
	if n := len(rcv.Hits()); n != 2 {
		t.Fatalf("globex's delivery reached a target exempted for acme only (%d requests)", n)
	}
	qs, _ := s.Queued(ListFilter{PartnerID: "globex"})
	if len(qs) != 1 || !strings.Contains(qs[0].Log[0].Error, "not allowed") {
		t.Fatalf("globex queued %+v, want one refused attempt", qs)
	}
}
