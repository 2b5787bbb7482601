package fulfilhttp

import (
	"crypto/rand"
	"encoding/hex"
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
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
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
