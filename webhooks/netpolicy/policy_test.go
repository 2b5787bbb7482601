package netpolicy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// allowedAt reports whether p allows ip at port 443.
func allowedAt(p *Policy, ip string) bool {
	return p.Allowed(netip.AddrPortFrom(netip.MustParseAddr(ip), 443))
}

// loopbackPolicy allows 127.0.0.0/8, where the test receivers listen.
func loopbackPolicy() *Policy {
	return &Policy{Allow: []AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}}
}

func TestNetPolicyAllowedAddr(t *testing.T) {
	var strict Policy
	denied := []string{
		"127.0.0.1", "127.255.255.254", "::1", "0.0.0.0", "::", "0.1.2.3",
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"100.64.0.1", "100.127.255.255", "169.254.169.254", "fe80::1", "fe80::1%eth0",
		"fc00::1", "fd12:3456::1", "224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2",
		"255.255.255.255", "240.0.0.1", "192.0.2.10", "198.18.0.1", "203.0.113.7",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2002:c0a8:101::",
		"2001:db8::1", "2001::1", "fec0::1", "100::1",
	}
	for _, s := range denied {
		if allowedAt(&strict, s) {
			t.Errorf("%s allowed, want refused", s)
		}
	}
	allowed := []string{
		"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.32.0.1",
		"2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range allowed {
		if !allowedAt(&strict, s) {
			t.Errorf("%s refused, want allowed", s)
		}
	}
	if strict.Allowed(netip.AddrPort{}) {
		t.Error("zero Addr allowed")
	}
	var nilPolicy *Policy
	if allowedAt(nilPolicy, "127.0.0.1") || !allowedAt(nilPolicy, "8.8.8.8") {
		t.Error("nil policy must behave as the strict policy")
	}

	loop := loopbackPolicy()
	for _, s := range []string{"127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1"} {
		if !allowedAt(loop, s) {
			t.Errorf("%s refused despite Allow 127.0.0.0/8", s)
		}
	}
	for _, s := range []string{"::1", "10.0.0.1", "169.254.169.254"} {
		if allowedAt(loop, s) {
			t.Errorf("%s allowed although only 127.0.0.0/8 is", s)
		}
	}
}

func TestNetPolicyCheckHost(t *testing.T) {
	ctx := context.Background()
	var strict Policy
	for _, h := range []string{"127.0.0.1", "[::1]", "::1", "localhost", "10.1.2.3", "[::ffff:127.0.0.1]", "169.254.169.254"} {
		err := strict.CheckHost(ctx, h, 443)
		if !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("CheckHost(%q) = %v, want ErrAddressNotAllowed", h, err)
		}
	}
	if err := strict.CheckHost(ctx, "8.8.8.8", 443); err != nil {
		t.Errorf("public literal refused: %v", err)
	}
	if err := strict.CheckHost(ctx, "", 443); err == nil {
		t.Error("empty host accepted")
	}
	if err := strict.CheckHost(ctx, "no-such-host.invalid", 443); err == nil {
		t.Error("unresolvable host accepted")
	}
	loop := Policy{Allow: []AllowRule{{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}}}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if err := loop.CheckHost(ctx, h, 443); err != nil {
			t.Errorf("CheckHost(%q) with loopback allowed: %v", h, err)
		}
	}
}

// TestNetPolicyControl dials a real listener on 127.0.0.1 through the hook:
// refused by the strict policy, accepted when 127.0.0.0/8 is allowed.
func TestNetPolicyControl(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	var strict Policy
	_, err := strict.Dialer().Dial("tcp", addr)
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("strict dial to %s: %v, want ErrAddressNotAllowed", addr, err)
	}
	c, err := loopbackPolicy().Dialer().Dial("tcp", addr)
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
	// A name that resolves to loopback is refused at dial time as well.
	_, port, _ := net.SplitHostPort(addr)
	if _, err := strict.Dialer().Dial("tcp4", net.JoinHostPort("localhost", port)); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("strict dial to localhost: %v", err)
	}
	if err := strict.Control("tcp", "garbage", nil); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("unparsable address: %v", err)
	}
}
