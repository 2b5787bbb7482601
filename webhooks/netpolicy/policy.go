// Package netpolicy is the server-side request forgery (SSRF) guard of
// webhook delivery: which addresses and ports a notification URL may reach,
// checked when a subscription is registered (CheckHost) and on the address
// actually dialled (Control).
package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// ErrAddressNotAllowed is wrapped by every refusal of Policy: the address
// is loopback, private, link-local, multicast, unspecified or otherwise not a
// public unicast address, and no Allow rule covers it; or it is one of the
// gateway's own listeners.
var ErrAddressNotAllowed = errors.New("address not allowed by the webhook network policy")

// ErrGatewayListener is wrapped (beside ErrAddressNotAllowed) by the
// refusal of an address and port that is one of Policy.Forbidden: the
// gateway's own admin endpoint or servers.
var ErrGatewayListener = errors.New("the gateway's own listener (admin endpoint or server)")

// Policy is the server-side request forgery guard of webhook delivery.
// A notification URL may only point at public unicast addresses; Allow
// rules exempt networks (and ports, and partners) from that, and Forbidden
// names the gateway's own listeners, which are never dialled whatever Allow
// says. The zero value (and a nil *Policy) allows public addresses only.
//
// A rule that names partners applies only through ForPartner: a policy
// used as it is (its Control hook, CheckHost) applies the rules that name
// no partner.
type Policy struct {
	// Allow lists exemptions from the public-address rule. Default: none.
	Allow []AllowRule
	// Forbidden lists the gateway's own listeners. Default: none.
	Forbidden []ForbiddenTarget
}

// deniedPrefixes are the special-purpose ranges that are never dialled
// (IANA IPv4/IPv6 special-purpose address registries), besides what the
// netip predicates already catch.
var deniedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",         // "this network"
		"10.0.0.0/8",        // RFC 1918
		"100.64.0.0/10",     // carrier-grade NAT (RFC 6598)
		"127.0.0.0/8",       // loopback
		"169.254.0.0/16",    // link-local (cloud metadata endpoints)
		"172.16.0.0/12",     // RFC 1918
		"192.0.0.0/24",      // IETF protocol assignments
		"192.0.2.0/24",      // TEST-NET-1
		"192.88.99.0/24",    // 6to4 relay anycast
		"192.168.0.0/16",    // RFC 1918
		"198.18.0.0/15",     // benchmarking
		"198.51.100.0/24",   // TEST-NET-2
		"203.0.113.0/24",    // TEST-NET-3
		"224.0.0.0/4",       // multicast
		"240.0.0.0/4",       // reserved, includes 255.255.255.255 broadcast
		"::/96",             // unspecified, loopback, deprecated IPv4-compatible
		"100::/64",          // discard-only
		"64:ff9b:1::/48",    // local-use IPv4/IPv6 translation
		"2001::/23",         // IETF protocol assignments (Teredo, ORCHID, ...)
		"2001:db8::/32",     // documentation
		"3fff::/20",         // documentation
		"5f00::/16",         // segment routing SIDs
		"fc00::/7",          // unique local (ULA)
		"fe80::/10",         // link-local
		"fec0::/10",         // deprecated site-local
		"ff00::/8",          // multicast
		"::ffff:0.0.0.0/96", // IPv4-mapped (checked after unmapping too)
		"::ffff:0:0:0/96",   // IPv4-translated (SIIT)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64: embeds an IPv4 address
	sixToFour   = netip.MustParsePrefix("2002::/16")    // 6to4: embeds an IPv4 address
)

// Allowed reports whether ap may be dialled (see check).
func (p *Policy) Allowed(ap netip.AddrPort) bool { return p.check(ap) == nil }

// check returns nil if ap may be dialled: it is not one of the gateway's
// own listeners, and an Allow rule that names no partner covers it or it is
// a public unicast address. IPv4-mapped IPv6 addresses and IPv6 forms that
// embed an IPv4 address (NAT64, 6to4) are judged by the IPv4 address they
// carry. The error wraps ErrAddressNotAllowed (and ErrGatewayListener for
// a listener of the gateway).
func (p *Policy) check(ap netip.AddrPort) error {
	ip := ap.Addr().WithZone("")
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrAddressNotAllowed)
	}
	ap = netip.AddrPortFrom(ip, ap.Port())
	if p != nil {
		for _, f := range p.Forbidden {
			if f.matches(ap) {
				return fmt.Errorf("%w: %s is %w", ErrAddressNotAllowed, ap, ErrGatewayListener)
			}
		}
		for _, r := range p.Allow {
			if r.covers(ap) {
				return nil
			}
		}
	}
	if !publicAddr(ip) {
		return fmt.Errorf("%w: %s", ErrAddressNotAllowed, ap)
	}
	return nil
}

// publicAddr reports whether ip is a public unicast address.
func publicAddr(ip netip.Addr) bool {
	if ip.Is4In6() {
		return publicAddr(ip.Unmap())
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			return publicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return publicAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	if ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, d := range deniedPrefixes {
		if d.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckHost resolves host (a name or an IP literal, with or without
// brackets) and returns an error wrapping ErrAddressNotAllowed if port on
// ANY of its addresses may not be dialled, or a resolution error. It is the
// registration-time check; Control repeats the check on the address
// actually dialled.
func (p *Policy) CheckHost(ctx context.Context, host string, port uint16) error {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return errors.New("empty host")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.check(netip.AddrPortFrom(ip, port))
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolving %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("resolving %q: no addresses", host)
	}
	for _, a := range addrs {
		if err := p.check(netip.AddrPortFrom(a, port)); err != nil {
			return fmt.Errorf("%s resolves to %w", host, err)
		}
	}
	return nil
}

// Control is a net.Dialer.Control hook: it refuses to connect to an address
// the policy does not allow. It sees the address actually dialled, after
// name resolution, so DNS rebinding gains nothing.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrAddressNotAllowed, address)
	}
	return p.check(ap)
}

// Dialer returns a net.Dialer whose Control hook is p.Control.
func (p *Policy) Dialer() *net.Dialer {
	return &net.Dialer{Control: p.Control}
}
