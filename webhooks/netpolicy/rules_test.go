package netpolicy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// withLocalAddrs makes this machine's interface addresses addrs for the
// test.
func withLocalAddrs(t *testing.T, addrs ...string) {
	t.Helper()
	old := localAddrs
	t.Cleanup(func() { localAddrs = old })
	localAddrs = func() []netip.Addr {
		out := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			out[i] = netip.MustParseAddr(a)
		}
		return out
	}
}

// The gateway's own listeners are refused whatever Allow says: the admin
// endpoint on localhost:2019 forbids port 2019 on every address of this
// host (loopback, unspecified, IPv4-mapped, its interfaces); other ports of
// the allowed network stay allowed.
func TestNetPolicyForbiddenBeatsAllow(t *testing.T) {
	withLocalAddrs(t, "192.168.7.5", "2001:db8::5")
	p := &Policy{
		Allow: []AllowRule{{Networks: prefixes("0.0.0.0/0", "::/0")}},
		Forbidden: []ForbiddenTarget{
			{Addr: netip.MustParseAddr("127.0.0.1"), Ports: PortRange{2019, 2019}},
			{Addr: netip.IPv6Unspecified(), Ports: PortRange{8080, 8089}},
		},
	}
	for _, a := range []string{
		"127.0.0.1:2019", "127.0.0.2:2019", "[::1]:2019", "0.0.0.0:2019", "[::]:2019",
		"[::ffff:127.0.0.1]:2019", "192.168.7.5:2019", "[2001:db8::5]:2019",
		"127.0.0.1:8080", "127.0.0.1:8085", "[::1]:8089", "192.168.7.5:8080",
	} {
		err := p.check(ap(a))
		if !errors.Is(err, ErrAddressNotAllowed) || !errors.Is(err, ErrGatewayListener) {
			t.Errorf("%s: %v, want refused as the gateway's own listener", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1:2020", "127.0.0.1:8090", "192.168.7.6:2019", "10.1.1.1:8080", "8.8.8.8:2019"} {
		if err := p.check(ap(a)); err != nil {
			t.Errorf("%s: %v, want allowed (another port, or not this host)", a, err)
		}
	}
}

// A listener bound to one non-local address (as a listen address naming a
// host's public address) forbids that address and port exactly.
func TestNetPolicyForbiddenSpecificAddress(t *testing.T) {
	withLocalAddrs(t)
	p := &Policy{Forbidden: []ForbiddenTarget{{Addr: netip.MustParseAddr("93.184.216.34"), Ports: PortRange{443, 443}}}}
	if p.Allowed(ap("93.184.216.34:443")) {
		t.Error("93.184.216.34:443 allowed, want refused (a listener of the gateway)")
	}
	if !p.Allowed(ap("93.184.216.34:8443")) || !p.Allowed(ap("93.184.216.35:443")) {
		t.Error("another port or address of a public host refused, want allowed")
	}
}

// A rule covers its networks at its ports only, and a rule naming partners
// applies only to them (through ForPartner); used without a partner it
// covers nothing.
func TestNetPolicyScopedRules(t *testing.T) {
	p := &Policy{Allow: []AllowRule{
		{Networks: prefixes("127.0.0.1/32"), Ports: []PortRange{{9000, 9099}, {9443, 9443}}},
		{Networks: prefixes("10.20.0.0/16"), Ports: []PortRange{{443, 443}}, Partners: []string{"acme"}},
	}}
	for _, c := range []struct {
		policy *Policy
		who    string
		addr   string
		want   bool
	}{
		{p, "any", "127.0.0.1:9000", true},
		{p, "any", "127.0.0.1:9099", true},
		{p, "any", "127.0.0.1:9443", true},
		{p, "any", "127.0.0.1:9100", false},
		{p, "any", "127.0.0.1:2019", false},
		{p, "any", "127.0.0.2:9000", false},
		{p, "no partner", "10.20.1.1:443", false},
		{p.ForPartner("acme"), "acme", "10.20.1.1:443", true},
		{p.ForPartner("acme"), "acme", "10.20.1.1:80", false},
		{p.ForPartner("acme"), "acme", "127.0.0.1:9000", true},
		{p.ForPartner("globex"), "globex", "10.20.1.1:443", false},
		{p.ForPartner("globex"), "globex", "127.0.0.1:9000", true},
	} {
		if got := c.policy.Allowed(ap(c.addr)); got != c.want {
			t.Errorf("%s to %s: allowed %v, want %v", c.who, c.addr, got, c.want)
		}
	}
	if !p.NamesPartner("acme") || p.NamesPartner("globex") {
		t.Error("NamesPartner: want true for acme only")
	}
}

// Registration checks the URL's port too: localhost at the admin port is
// refused although loopback is allowed.
func TestNetPolicyCheckHostPort(t *testing.T) {
	p := &Policy{
		Allow:     []AllowRule{{Networks: prefixes("127.0.0.0/8", "::1/128")}},
		Forbidden: []ForbiddenTarget{{Addr: netip.MustParseAddr("127.0.0.1"), Ports: PortRange{2019, 2019}}},
	}
	ctx := context.Background()
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]", "127.9.9.9"} {
		if err := p.CheckHost(ctx, h, 2019); !errors.Is(err, ErrGatewayListener) {
			t.Errorf("%s:2019: %v, want refused as the gateway's own listener", h, err)
		}
		if err := p.CheckHost(ctx, h, 2020); err != nil {
			t.Errorf("%s:2020: %v, want allowed", h, err)
		}
	}
}

// Control refuses a real listener of "the gateway" on 127.0.0.1 although
// loopback is allowed, on the address actually dialled (a name that
// resolves to it included).
func TestNetPolicyControlRefusesForbidden(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	p := loopbackPolicy()
	p.Forbidden = []ForbiddenTarget{{Addr: netip.MustParseAddr("127.0.0.1"), Ports: PortRange{port, port}}}
	for _, addr := range []string{l.Addr().String(), net.JoinHostPort("localhost", strconv.Itoa(int(port)))} {
		c, err := p.Dialer().Dial("tcp4", addr)
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, ErrGatewayListener) {
			t.Errorf("dial %s: %v, want refused as the gateway's own listener", addr, err)
		}
	}
}

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]PortRange{"443": {443, 443}, "9000-9099": {9000, 9099}, "1-65535": {1, 65535}} {
		if got, err := ParsePortRange(in); err != nil || got != want || got.String() != in {
			t.Errorf("ParsePortRange(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "65536", "9099-9000", "a", "1-", "-5", "1-2-3", " 80"} {
		if _, err := ParsePortRange(in); err == nil {
			t.Errorf("ParsePortRange(%q) accepted, want an error", in)
		}
	}
}
