package tokenauth

import (
	"cmp"
	"fmt"
	"net/http"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	caddy.RegisterModule(new(AuthHandler))
}

// AuthHandler is the HTTP handler http.handlers.fulfilment_auth (Caddyfile
// directive fulfilment_auth; syntax in caddyfile.go): the Bearer guard
// in front of the fulfilment resource interface.
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
//     fulfilhttp.PartnerFromRequest), and partner_id and client_id added to Caddy's
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

	app        *fulfilment.App
	logger     *zap.Logger
	headers    fulfilhttp.IdentityHeaders // the identity header; the names the guard sets or strips, never hop-by-hop
	requestID  string
	strip      []string // StripHeaders, canonical
	accessLog  accessLog
	challenge  string // for 401 without a token
	invalidHdr string // for 401 invalid_token
	expiredHdr string // for 403
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
	// Caddy provisions a server's handlers with the server in the context;
	// whether it writes an access log is fixed with its configuration.
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		h.accessLog = accessLogOff
		if srv.Logs != nil {
			h.accessLog = accessLogOn
		}
	}
	var err error
	h.app, err = fulfilhttp.LoadApp(ctx)
	return err
}

// setup fills the defaults and the prepared challenge headers.
func (h *AuthHandler) setup() {
	identity := http.CanonicalHeaderKey(cmp.Or(h.IdentityHeader, defaultIdentityHeader))
	h.requestID = http.CanonicalHeaderKey(cmp.Or(h.RequestIDHeader, defaultRequestIDHeader))
	h.headers = fulfilhttp.IdentityHeaders{Identity: identity, Protected: []string{identity, h.requestID}}
	h.strip = nil
	for _, name := range h.StripHeaders {
		h.strip = append(h.strip, http.CanonicalHeaderKey(name))
	}
	h.headers.Protected = append(h.headers.Protected, h.strip...)
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
		if !fulfilhttp.ValidHeaderName(name) {
			return fmt.Errorf("fulfilment_auth: strip_headers: invalid header name %q", name)
		}
	}
	identity := cmp.Or(h.IdentityHeader, defaultIdentityHeader)
	requestID := cmp.Or(h.RequestIDHeader, defaultRequestIDHeader)
	for _, set := range []struct{ option, name string }{
		{"identity_header", identity}, {"request_id_header", requestID},
	} {
		if !fulfilhttp.ValidHeaderName(set.name) {
			return fmt.Errorf("fulfilment_auth: %s: invalid header name %q", set.option, set.name)
		}
		if fulfilhttp.IsHopByHop(set.name) {
			return fmt.Errorf("fulfilment_auth: %s: %q is a hop-by-hop header, which a proxy never forwards", set.option, set.name)
		}
	}
	if fulfilhttp.SameHeaderName(identity, requestID) {
		return fmt.Errorf("fulfilment_auth: identity_header and request_id_header are both %q", identity)
	}
	return nil
}

// passage is what the guard attaches to one request, in one allocation:
// the header values it sets, and the values of the variables, which go
// into Caddy's vars map as pointers into it (a pointer in an interface
// value needs no allocation of its own).
type passage struct {
	// The request id on the answer and upstream, and the identity
	// upstream. Each header gets a slice of its own element with no room
	// to grow, so what runs later may edit or append to one without
	// touching another.
	vals      [3]string
	ridText   [36]byte // the request id's bytes
	requestID fulfilhttp.Text
	client    fulfilhttp.Text
	partner   fulfilhttp.VerifiedPartner
}

// ServeHTTP implements caddyhttp.MiddlewareHandler: the request goes on to
// next only if Admit lets it pass.
func (h *AuthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if _, ok := h.Admit(w, r); !ok {
		return nil
	}
	return next.ServeHTTP(w, r)
}

// Admit is the guard's work on one request. When r carries a valid token
// it removes Authorization, sets the identity and request id headers and
// variables, and returns the verified partner and true: r may go on.
// Otherwise it has answered (401, 403, or 503 while the gateway starts or
// stops) and returns false: nothing else may answer or forward r.
func (h *AuthHandler) Admit(w http.ResponseWriter, r *http.Request) (fulfilhttp.VerifiedPartner, bool) {
	return h.admit(w, r, true)
}

// AdmitBeforeVersion is Admit for a request that, once admitted, is either
// answered by the gateway or forwarded by fulfilment_version's
// ServeVerified, as fulfilment_gateway does: it leaves out the Connection
// and upgrade checks, which ServeVerified makes before it forwards.
func (h *AuthHandler) AdmitBeforeVersion(w http.ResponseWriter, r *http.Request) (fulfilhttp.VerifiedPartner, bool) {
	return h.admit(w, r, false)
}

// admit is Admit; forwarded says whether the request may be forwarded by
// a handler other than fulfilment_version, so that the guard itself makes
// it safe to forward.
func (h *AuthHandler) admit(w http.ResponseWriter, r *http.Request, forwarded bool) (fulfilhttp.VerifiedPartner, bool) {
	p := new(passage)
	fulfilhttp.FillRequestID(&p.ridText)
	// The id's string shares the passage's allocation: its bytes were
	// written once, just above, and are never written again.
	rid := unsafe.String(&p.ridText[0], len(p.ridText))
	p.vals[0], p.vals[1], p.requestID = rid, rid, fulfilhttp.Text(rid)
	w.Header()[h.requestID] = p.vals[0:1:1]
	r.Header[h.requestID] = p.vals[1:2:2]
	// Caddy's vars map (nil outside a Caddy server), looked up once.
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	if vars != nil {
		vars[fulfilhttp.RequestIDVar] = &p.requestID
	}
	extra := h.accessLogFields(r)
	if extra != nil {
		extra.Set(zap.String("request_id", rid))
	}
	svc := h.app.TokenService()
	if svc == nil {
		fulfilhttp.Metrics().GuardUnavailable()
		fulfilhttp.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "the gateway is starting or stopping")
		return fulfilhttp.VerifiedPartner{}, false
	}
	auth := r.Header["Authorization"]
	var id tokens.Identity
	var verr *tokens.VerifyError
	if len(auth) != 1 {
		_, verr = svc.VerifyHeader("")
	} else {
		id, verr = svc.VerifyHeader(auth[0])
	}
	if verr != nil {
		h.refuse(w, r, verr)
		return fulfilhttp.VerifiedPartner{}, false
	}
	delete(r.Header, "Authorization")
	for _, name := range h.strip {
		delete(r.Header, name)
	}
	p.vals[2] = id.PartnerID
	r.Header[h.headers.Identity] = p.vals[2:3:3]
	if forwarded {
		if _, ok := r.Header["Connection"]; ok {
			fulfilhttp.DropConnectionTokens(r.Header, h.headers.Protected)
		}
		fulfilhttp.DropUpgradeAndTrailers(r, nil)
	}
	p.partner = h.headers.Verified(id.PartnerID)
	if vars != nil {
		p.client = fulfilhttp.Text(id.ClientID)
		vars[fulfilhttp.PartnerIDVar] = &p.partner
		vars[fulfilhttp.ClientIDVar] = &p.client
	}
	if extra != nil {
		extra.Set(zap.String("partner_id", id.PartnerID))
		extra.Set(zap.String("client_id", id.ClientID))
	}
	return p.partner, true
}

// accessLog is whether the guard's server writes an access log, as far as
// the guard knows from its provisioning.
type accessLog int

const (
	accessLogUnknown accessLog = iota // provisioned outside a server: ask r's
	accessLogOff
	accessLogOn
)

// accessLogFields returns the fields Caddy adds to r's access log entry,
// or nil when r's server writes no access log (the only reader of those
// fields; a server without a log directive skips the work of adding them).
func (h *AuthHandler) accessLogFields(r *http.Request) *caddyhttp.ExtraLogFields {
	switch h.accessLog {
	case accessLogOff:
		return nil
	case accessLogUnknown:
		if srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil && srv.Logs == nil {
			return nil
		}
	}
	extra, _ := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	return extra
}

// refuse answers 401 or 403 with the challenge and a problem body.
func (h *AuthHandler) refuse(w http.ResponseWriter, r *http.Request, verr *tokens.VerifyError) {
	fulfilhttp.Metrics().GuardRefusal(verr.Fault)
	switch verr.Fault {
	case tokens.FaultExpired:
		w.Header().Set("WWW-Authenticate", h.expiredHdr)
		fulfilhttp.WriteProblem(w, http.StatusForbidden, "token-expired", "The access token expired; obtain a new one at /api/auth/token")
	case tokens.FaultMissing:
		w.Header().Set("WWW-Authenticate", h.challenge)
		fulfilhttp.WriteProblem(w, http.StatusUnauthorized, "unauthorized", "An Authorization header with a Bearer access token is required")
	default:
		w.Header().Set("WWW-Authenticate", h.invalidHdr)
		fulfilhttp.WriteProblem(w, http.StatusUnauthorized, "invalid-token", "The access token is invalid")
	}
	if ce := h.logger.Check(zapcore.DebugLevel, "access token refused"); ce != nil {
		ce.Write(zap.String("reason", verr.Reason), zap.String("remote_ip", fulfilhttp.ClientAddr(r)), fulfilhttp.RequestIDField(r))
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*AuthHandler)(nil)
	_ caddy.Validator             = (*AuthHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*AuthHandler)(nil)
)
