package fulfilhttp

import (
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// RequestIDVar is the variable holding the id the Bearer guard gave the
// request: {http.vars.fulfilment.request_id}.
const RequestIDVar = "fulfilment.request_id"

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
