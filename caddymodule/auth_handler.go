package caddymodule

import (
	"cmp"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	caddy.RegisterModule(new(AuthHandler))
}

// AuthHandler is the HTTP handler http.handlers.fulfilment_auth (Caddyfile
// directive fulfilment_auth; syntax in auth_caddyfile.go): the Bearer guard
// in front of the fulfilment resource interface (decisions §2).
//
// A request with a valid access token goes on with:
//   - Authorization removed, and the identity header (and any header in
//     strip_headers) removed and then set to the partner id, so the upstream
//     never sees the token nor a partner-chosen identity;
//   - the names of the identity header, the request id header and the
//     strip_headers taken out of the Connection header, so that no proxy
//     after the guard removes the headers the guard set as hop-by-hop
//     headers (the caller's headers of those names are gone already);
//   - no protocol upgrade (Upgrade) and no trailers, so that nothing the
//     caller sends after the guard ran reaches the upstream;
//   - the verified identity attached to the request's context (the
//     variable fulfilment.partner_id holds a value only the guard can make):
//     fulfilment_version forwards a request only with that identity;
//   - the request id header set to a new random UUID, the request's id (also
//     on every answer, refusals included), also in the variable
//     fulfilment.request_id ({http.vars.fulfilment.request_id}) and, as
//     request_id, in Caddy's access log entry;
//   - the variables fulfilment.partner_id and fulfilment.client_id set
//     (placeholders {http.vars.fulfilment.partner_id} and
//     {http.vars.fulfilment.client_id}; read them in Go with
//     partnerFromRequest), and partner_id and client_id added to Caddy's
//     access log entry.
//
// Refusals are application/problem+json and never reach the next handler:
//
//	401 missing or malformed Authorization: WWW-Authenticate: Bearer realm="fulfilment"
//	401 invalid token (signature, alg, kid, iss, aud, revoked, disabled,
//	    not yet valid, or any of these with expiry): Bearer error="invalid_token"
//	403 a genuine, otherwise valid token that expired: Bearer error="invalid_token",
//	    error_description="The access token expired"
//	503 while the fulfilment app is not running
type AuthHandler struct {
	// IdentityHeader carries the partner id upstream. Default "X-Partner-Id".
	IdentityHeader string `json:"identity_header,omitempty"`
	// StripHeaders are more request headers removed before the request goes
	// on (for example an upstream's own identity headers). Default: none.
	StripHeaders []string `json:"strip_headers,omitempty"`
	// Realm of the WWW-Authenticate challenge. Default "fulfilment".
	Realm string `json:"realm,omitempty"`
	// RequestIDHeader carries the request id (a random UUID the guard
	// makes, request_id in the access log entry) upstream, replacing any
	// value the partner sent, and back to the partner on every answer, so
	// both sides can quote it. Default "X-Request-Id".
	RequestIDHeader string `json:"request_id_header,omitempty"`

	app        *App
	logger     *zap.Logger
	identity   string
	requestID  string
	protected  []string // header names the guard sets or strips: never hop-by-hop
	challenge  string   // for 401 without a token
	invalidHdr string   // for 401 invalid_token
	expiredHdr string   // for 403
}

// CaddyModule returns the Caddy module information.
func (*AuthHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_auth",
		New: func() caddy.Module { return new(AuthHandler) },
	}
}

// The headers the guard sets upstream unless configured otherwise.
const (
	defaultIdentityHeader  = "X-Partner-Id"
	defaultRequestIDHeader = "X-Request-Id"
)

// Provision fills defaults and finds the fulfilment app.
func (h *AuthHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	h.setup()
	var err error
	h.app, err = fulfilmentApp(ctx)
	return err
}

// setup fills the defaults and the prepared challenge headers.
func (h *AuthHandler) setup() {
	h.identity = http.CanonicalHeaderKey(cmp.Or(h.IdentityHeader, defaultIdentityHeader))
	h.requestID = http.CanonicalHeaderKey(cmp.Or(h.RequestIDHeader, defaultRequestIDHeader))
	h.protected = []string{h.identity, h.requestID}
	for _, name := range h.StripHeaders {
		h.protected = append(h.protected, http.CanonicalHeaderKey(name))
	}
	realm := h.Realm
	if realm == "" {
		realm = "fulfilment"
	}
	h.challenge = fmt.Sprintf(`Bearer realm=%q`, realm)
	h.invalidHdr = fmt.Sprintf(`Bearer realm=%q, error="invalid_token"`, realm)
	h.expiredHdr = fmt.Sprintf(`Bearer realm=%q, error="invalid_token", error_description="The access token expired"`, realm)
}

// Validate checks the header names: field names (tokens), and the two the
// guard sets neither equal nor a hop-by-hop header, which no proxy forwards.
func (h *AuthHandler) Validate() error {
	for _, name := range h.StripHeaders {
		if !validHeaderName(name) {
			return fmt.Errorf("fulfilment_auth: strip_headers: invalid header name %q", name)
		}
	}
	identity := cmp.Or(h.IdentityHeader, defaultIdentityHeader)
	requestID := cmp.Or(h.RequestIDHeader, defaultRequestIDHeader)
	for _, set := range []struct{ option, name string }{
		{"identity_header", identity}, {"request_id_header", requestID},
	} {
		if !validHeaderName(set.name) {
			return fmt.Errorf("fulfilment_auth: %s: invalid header name %q", set.option, set.name)
		}
		if namesAny(set.name, hopByHopHeaders) {
			return fmt.Errorf("fulfilment_auth: %s: %q is a hop-by-hop header, which a proxy never forwards", set.option, set.name)
		}
	}
	if asciiEqualFold(identity, requestID) {
		return fmt.Errorf("fulfilment_auth: identity_header and request_id_header are both %q", identity)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *AuthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	rid := newRequestID()
	// One slice for both: a later Add on either side appends to a full
	// slice and so copies it.
	v := []string{rid}
	w.Header()[h.requestID] = v
	r.Header[h.requestID] = v
	// Caddy's vars map (nil outside a Caddy server), looked up once.
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	if vars != nil {
		vars[requestIDVar] = rid
	}
	extra := accessLogFields(r)
	if extra != nil {
		extra.Set(zap.String("request_id", rid))
	}
	svc := h.app.tokenService()
	if svc == nil {
		gwMetrics().guard503.Inc()
		writeProblem(w, http.StatusServiceUnavailable, "unavailable", "the gateway is starting or stopping")
		return nil
	}
	auth := r.Header.Values("Authorization")
	var id tokens.Identity
	var verr *tokens.VerifyError
	if len(auth) != 1 {
		_, verr = svc.VerifyHeader("")
	} else {
		id, verr = svc.VerifyHeader(auth[0])
	}
	if verr != nil {
		h.refuse(w, r, verr)
		return nil
	}
	r.Header.Del("Authorization")
	for _, name := range h.StripHeaders {
		r.Header.Del(name)
	}
	r.Header[h.identity] = []string{id.PartnerID}
	if _, ok := r.Header["Connection"]; ok {
		dropConnectionTokens(r.Header, h.protected)
	}
	dropUpgradeAndTrailers(r)
	if vars != nil {
		vars[partnerIDVar] = verifiedPartner{id: id.PartnerID, guard: h}
		vars[clientIDVar] = id.ClientID
	}
	if extra != nil {
		extra.Set(zap.String("partner_id", id.PartnerID))
		extra.Set(zap.String("client_id", id.ClientID))
	}
	return next.ServeHTTP(w, r)
}

// forwardIdentity makes hdr carry partner, the identity this guard
// verified, under the guard's identity header, and leaves none of the
// guard's header names in Connection: the last step before a request is
// forwarded. (The guard did both already; whatever ran since may not have
// kept them.)
func (h *AuthHandler) forwardIdentity(hdr http.Header, partner string) {
	if v := hdr[h.identity]; len(v) != 1 || v[0] != partner {
		hdr[h.identity] = []string{partner}
	}
	if _, ok := hdr["Connection"]; ok {
		dropConnectionTokens(hdr, h.protected)
	}
}

// accessLogFields returns the fields Caddy adds to r's access log entry,
// or nil when r's server writes no access log (the only reader of those
// fields; a server without a log directive skips the work of adding them).
func accessLogFields(r *http.Request) *caddyhttp.ExtraLogFields {
	if srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil && srv.Logs == nil {
		return nil
	}
	extra, _ := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	return extra
}

// refuse answers 401 or 403 with the challenge and a problem body.
func (h *AuthHandler) refuse(w http.ResponseWriter, r *http.Request, verr *tokens.VerifyError) {
	gwMetrics().guardRefusal(verr.Fault)
	switch verr.Fault {
	case tokens.FaultExpired:
		w.Header().Set("WWW-Authenticate", h.expiredHdr)
		writeProblem(w, http.StatusForbidden, "token-expired", "The access token expired; obtain a new one at /api/auth/token")
	case tokens.FaultMissing:
		w.Header().Set("WWW-Authenticate", h.challenge)
		writeProblem(w, http.StatusUnauthorized, "unauthorized", "An Authorization header with a Bearer access token is required")
	default:
		w.Header().Set("WWW-Authenticate", h.invalidHdr)
		writeProblem(w, http.StatusUnauthorized, "invalid-token", "The access token is invalid")
	}
	if ce := h.logger.Check(zapcore.DebugLevel, "access token refused"); ce != nil {
		ce.Write(zap.String("reason", verr.Reason), zap.String("remote_ip", clientAddr(r)), requestIDField(r))
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*AuthHandler)(nil)
	_ caddy.Validator             = (*AuthHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*AuthHandler)(nil)
)
