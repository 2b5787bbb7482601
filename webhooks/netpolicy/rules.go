package netpolicy

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// PortRange is an inclusive range of TCP ports; First == Last is one port.
type PortRange struct{ First, Last uint16 }

// ParsePortRange reads "443" or "9000-9099".
func ParsePortRange(s string) (PortRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	first, err1 := parsePort(lo)
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = parsePort(hi)
	}
	if err1 != nil || err2 != nil || last < first {
		return PortRange{}, fmt.Errorf("%q is neither a port (1-65535) nor a range of ports (low-high)", s)
	}
	return PortRange{first, last}, nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return uint16(n), nil
}

func (r PortRange) contains(port uint16) bool { return r.First <= port && port <= r.Last }

// String is "443" or "9000-9099".
func (r PortRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(int(r.First))
	}
	return strconv.Itoa(int(r.First)) + "-" + strconv.Itoa(int(r.Last))
}

// AllowRule exempts addresses from the public-address rule: those in one
// of Networks, at one of Ports, for one of Partners.
type AllowRule struct {
	// Networks the rule covers. A rule without networks covers nothing.
	Networks []netip.Prefix
	// Ports the rule covers. Empty: every port.
	Ports []PortRange
	// Partners the rule applies to (through Policy.ForPartner). Empty:
	// every partner.
	Partners []string
}

// covers reports whether the rule exempts ap; a rule that names partners
// covers nothing until ForPartner has resolved it.
func (r AllowRule) covers(ap netip.AddrPort) bool {
	if len(r.Partners) > 0 {
		return false
	}
	if len(r.Ports) > 0 && !slices.ContainsFunc(r.Ports, func(pr PortRange) bool { return pr.contains(ap.Port()) }) {
		return false
	}
	ip, un := ap.Addr(), ap.Addr().Unmap()
	return slices.ContainsFunc(r.Networks, func(n netip.Prefix) bool { return n.Contains(ip) || n.Contains(un) })
}

// String describes the rule for logs: "127.0.0.1/32 ports 9090 partners a,b".
func (r AllowRule) String() string {
	var b strings.Builder
	for i, n := range r.Networks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(n.String())
	}
	if len(r.Ports) > 0 {
		b.WriteString(" ports")
		for _, p := range r.Ports {
			b.WriteString(" " + p.String())
		}
	} else {
		b.WriteString(" every port")
	}
	if len(r.Partners) > 0 {
		b.WriteString(" partners " + strings.Join(r.Partners, ","))
	}
	return b.String()
}

// ForbiddenTarget is one of the gateway's own listeners: an address and its
// ports. The unspecified address (0.0.0.0, ::) stands for a listener on
// every interface.
type ForbiddenTarget struct {
	Addr  netip.Addr
	Ports PortRange
}

// String is "127.0.0.1:2019" or "[::]:8080-8089".
func (f ForbiddenTarget) String() string {
	return net.JoinHostPort(f.Addr.String(), f.Ports.String())
}

// matches reports whether dialling ap would reach the listener f: same
// port, and the same address, or both addresses are this host's (a
// loopback, unspecified or local interface address). A listener on one
// address of this host thus also forbids the same port on every other
// address of this host: stricter than what the kernel would route to it,
// never looser.
func (f ForbiddenTarget) matches(ap netip.AddrPort) bool {
	if !f.Ports.contains(ap.Port()) {
		return false
	}
	ip, own := ap.Addr().Unmap(), f.Addr.Unmap().WithZone("")
	return ip == own || (thisHost(own) && thisHost(ip))
}

// thisHost reports whether ip is an address of this machine: loopback,
// unspecified (which the kernel dials as local), or an address of one of
// its interfaces.
func thisHost(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	return slices.Contains(localAddrs(), ip)
}

// localAddrs returns the addresses of this machine's interfaces (read at
// each call: they change; only a dial to a forbidden port asks).
var localAddrs = func() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

// ForPartner returns the policy that applies to partnerID's webhooks: the
// rules that name no partner, and those that name partnerID (as rules
// for every partner). The result is p's own copy.
func (p *Policy) ForPartner(partnerID string) *Policy {
	out := &Policy{}
	if p == nil {
		return out
	}
	out.Forbidden = slices.Clone(p.Forbidden)
	for _, r := range p.Allow {
		if len(r.Partners) > 0 && !slices.Contains(r.Partners, partnerID) {
			continue
		}
		out.Allow = append(out.Allow, AllowRule{Networks: slices.Clone(r.Networks), Ports: slices.Clone(r.Ports)})
	}
	return out
}

// NamesPartner reports whether a rule of p names partnerID.
func (p *Policy) NamesPartner(partnerID string) bool {
	if p == nil {
		return false
	}
	return slices.ContainsFunc(p.Allow, func(r AllowRule) bool { return slices.Contains(r.Partners, partnerID) })
}

// Clone returns a deep copy of p (nil stays nil).
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	out := &Policy{Forbidden: slices.Clone(p.Forbidden)}
	for _, r := range p.Allow {
		out.Allow = append(out.Allow, AllowRule{Networks: slices.Clone(r.Networks),
			Ports: slices.Clone(r.Ports), Partners: slices.Clone(r.Partners)})
	}
	return out
}

// Equal reports whether p and o are the same policy (nil is the empty one).
func (p *Policy) Equal(o *Policy) bool {
	var a, b Policy
	if p != nil {
		a = *p
	}
	if o != nil {
		b = *o
	}
	return slices.Equal(a.Forbidden, b.Forbidden) && slices.EqualFunc(a.Allow, b.Allow, func(x, y AllowRule) bool {
		return slices.Equal(x.Networks, y.Networks) && slices.Equal(x.Ports, y.Ports) && slices.Equal(x.Partners, y.Partners)
	})
}
