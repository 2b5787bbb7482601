package fulfilment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// AllowNetwork is one exemption from the webhook SSRF rules: notification
// URLs may point at Networks, at Ports, for Partners. In JSON it is an
// object, or (the earlier form) a string naming one network, which covers
// every port for every partner.
type AllowNetwork struct {
	// Networks: CIDR prefixes or single IP addresses. Required.
	Networks []string `json:"networks"`
	// Ports: "443" or "9000-9099". Default: every port (a warning says so
	// at start; name the ports the receivers use).
	Ports []string `json:"ports,omitempty"`
	// Partners the exemption applies to. Default: every partner.
	Partners []string `json:"partners,omitempty"`
}

// UnmarshalJSON accepts the object, or a string naming one network.
func (n *AllowNetwork) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = AllowNetwork{Networks: []string{s}}
		return nil
	}
	type plain AllowNetwork
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(n))
}

// parseAllowNetwork reads one allow_networks line; d is positioned on
// "allow_networks":
//
//	allow_networks <cidr|ip>... [{
//		ports    <port|low-high>...
//		partners <partner-id>...
//	}]
func parseAllowNetwork(d *caddyfile.Dispenser) (AllowNetwork, error) {
	var n AllowNetwork
	n.Networks = d.RemainingArgs()
	if len(n.Networks) == 0 {
		return n, d.ArgErr()
	}
	for _, a := range n.Networks {
		if _, err := parseNetwork(a); err != nil {
			return n, d.Errf("allow_networks: %v", err)
		}
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return n, d.Errf("allow_networks option %q given twice", opt)
		}
		seen[opt] = true
		args := d.RemainingArgs()
		if len(args) == 0 {
			return n, d.ArgErr()
		}
		switch opt {
		case "ports":
			for _, p := range args {
				if _, err := netpolicy.ParsePortRange(p); err != nil {
					return n, d.Errf("allow_networks ports: %v", err)
				}
			}
			n.Ports = args
		case "partners":
			n.Partners = args
		default:
			return n, d.Errf("unknown allow_networks option %q (want ports or partners)", opt)
		}
	}
	return n, nil
}

// rule checks n and returns it as the domain's rule.
func (n AllowNetwork) rule() (netpolicy.AllowRule, error) {
	var r netpolicy.AllowRule
	if len(n.Networks) == 0 {
		return r, errors.New("an entry names no network")
	}
	for _, s := range n.Networks {
		p, err := parseNetwork(s)
		if err != nil {
			return r, err
		}
		r.Networks = append(r.Networks, p)
	}
	for _, s := range n.Ports {
		p, err := netpolicy.ParsePortRange(s)
		if err != nil {
			return r, err
		}
		r.Ports = append(r.Ports, p)
	}
	for _, p := range n.Partners {
		if p == "" || strings.ContainsRune(p, 0) {
			return r, fmt.Errorf("partner %q is not a partner id", p)
		}
		r.Partners = append(r.Partners, p)
	}
	return r, nil
}

// parseNetwork reads a CIDR prefix or a single address (a one-address
// prefix), in canonical (masked) form.
func parseNetwork(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR network", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR network nor an IP address", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
