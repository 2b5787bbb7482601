package fulfilhttp

import (
	"net/http"
	"net/textproto"
	"strings"
)

// A request's Connection header names hop-by-hop headers, which a proxy
// removes before it forwards the request (RFC 9110 §7.6.1); Caddy's
// reverse_proxy does so after every handler before it has run. A caller
// naming a header the gateway sets (the identity, the request id) would so
// have the proxy delete the gateway's own value. The caller's header of that
// name has been removed or replaced by then: the name refers to nothing the
// caller sent, and DropConnectionTokens takes it out of Connection.

// hopByHopHeaders are the headers a proxy never forwards, whatever
// Connection says; the gateway cannot send its own headers under these names.
var hopByHopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// DropConnectionTokens removes from h's Connection header every token that
// names one of names (canonical header names). Tokens are read as Caddy's
// proxy reads them: split at commas, trimmed of spaces and tabs, compared
// without regard to ASCII case. A value left without tokens is removed, and
// the header with its last value. Nothing is allocated unless a token
// matches.
func DropConnectionTokens(h http.Header, names []string) {
	vals := h["Connection"]
	if !connectionNamesAny(vals, names) {
		return
	}
	var kept []string
	for _, v := range vals {
		var toks []string
		for tok := range strings.SplitSeq(v, ",") {
			if tok = textproto.TrimString(tok); tok != "" && !namesAny(tok, names) {
				toks = append(toks, tok)
			}
		}
		if len(toks) > 0 {
			kept = append(kept, strings.Join(toks, ", "))
		}
	}
	if len(kept) == 0 {
		delete(h, "Connection")
		return
	}
	h["Connection"] = kept
}

// IsHopByHop reports whether name is a header a proxy never forwards.
func IsHopByHop(name string) bool { return namesAny(name, hopByHopHeaders) }

// SameHeaderName reports whether a and b name the same header (they differ
// at most in ASCII case).
func SameHeaderName(a, b string) bool { return asciiEqualFold(a, b) }

// connectionNamesAny reports whether a token of the Connection values vals
// names one of names.
func connectionNamesAny(vals, names []string) bool {
	for _, v := range vals {
		for v != "" {
			tok, rest, _ := strings.Cut(v, ",")
			if namesAny(textproto.TrimString(tok), names) {
				return true
			}
			v = rest
		}
	}
	return false
}

// namesAny reports whether tok is one of names, ignoring ASCII case (the
// only difference http.Header.Del's canonicalisation removes).
func namesAny(tok string, names []string) bool {
	for _, n := range names {
		if asciiEqualFold(tok, n) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ValidHeaderName reports whether name is an RFC 9110 field name (a token).
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// upgradeTokens is the Connection token that asks for a protocol upgrade.
var upgradeTokens = []string{"Upgrade"}

// DropUpgradeAndTrailers keeps r a plain request to forward: no protocol
// upgrade and no trailers. An upgrade the upstream accepted (101, e.g. to
// h2c or websocket) would make the proxy copy bytes both ways, so the
// caller could send the upstream any request on that connection with any
// identity; trailers arrive after the guard ran, and a trailer named like
// the identity header would reach the upstream unchecked. The interface
// uses neither. A server may ignore Upgrade (RFC 9110 §7.8), so the request
// is answered as if it had not asked.
//
// also, if not nil, names more headers to remove (it is given canonical
// names); with it, the headers are read in one pass instead of looked up
// name by name.
func DropUpgradeAndTrailers(r *http.Request, also func(name string) bool) {
	if r.Trailer != nil {
		r.Trailer = nil
	}
	if also == nil {
		if _, ok := r.Header["Trailer"]; ok {
			delete(r.Header, "Trailer")
		}
		if _, ok := r.Header["Upgrade"]; ok {
			delete(r.Header, "Upgrade")
		}
	} else {
		for name := range r.Header {
			if name == "Trailer" || name == "Upgrade" || also(name) {
				delete(r.Header, name)
			}
		}
	}
	if _, ok := r.Header["Connection"]; ok {
		DropConnectionTokens(r.Header, upgradeTokens)
	}
}
