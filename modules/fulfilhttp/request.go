package fulfilhttp

import (
	"crypto/rand"
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// RequestIDVar is the variable holding the id the Bearer guard gave the
// request: {http.vars.fulfilment.request_id}.
const RequestIDVar = "fulfilment.request_id"

// NewRequestID returns a random (version 4) UUID in its 36-character text
// form. It is the gateway's own, not Caddy's {http.request.uuid}: that
// placeholder costs a request several allocations it does not otherwise
// need (it registers itself in the vars and the access log's fields).
func NewRequestID() string {
	var s [36]byte
	FillRequestID(&s)
	return string(s[:])
}

// FillRequestID writes a new request id (NewRequestID's text) into s.
func FillRequestID(s *[36]byte) {
	var u [16]byte
	_, _ = rand.Read(u[:])  // never fails (crypto/rand panics instead)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	formatUUID(s, &u)
}

// uuidAt is where the two hex digits of each byte of a UUID go in its
// text form (8-4-4-4-12 digits, with dashes between).
var uuidAt = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// formatUUID writes u's text form into s: one table look-up per digit
// (encoding/hex's Encode per group costs about three times as much).
func formatUUID(s *[36]byte, u *[16]byte) {
	const digits = "0123456789abcdef"
	for i, at := range uuidAt {
		s[at], s[at+1] = digits[u[i]>>4], digits[u[i]&0x0f]
	}
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
}

// RequestIDField is the request id the guard gave r, for log lines about
// r ("" when r did not pass the guard).
func RequestIDField(r *http.Request) zap.Field {
	return zap.String("request_id", VarText(caddyhttp.GetVar(r.Context(), RequestIDVar)))
}

// ClientAddr is Caddy's client IP for r (which honours trusted_proxies), or
// the connection's address.
func ClientAddr(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
