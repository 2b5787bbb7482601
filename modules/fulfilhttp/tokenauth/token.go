// Package tokenauth is the OAuth side of the fulfilment interface: the
// token endpoint (http.handlers.fulfilment_token) and the Bearer guard in
// front of the resource interface (http.handlers.fulfilment_auth). Both use
// the fulfilment app's token service.
package tokenauth

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	caddy.RegisterModule(new(TokenHandler))
}

// TokenHandler is the HTTP handler http.handlers.fulfilment_token
// (Caddyfile directive `fulfilment_token`, no arguments): the OAuth 2.0
// client credentials token endpoint, POST /api/auth/token, with RFC 6749's
// success and error bodies. Without Path it answers every request it is
// given (give its route a path matcher) and never calls the next handler;
// with Path it answers the requests for that path and passes every other
// request to the next handler.
//
//	200 {"access_token","token_type":"Bearer","expires_in"}, Cache-Control: no-store
//	400 invalid_request (both client authentication forms, two Authorization
//	    headers, no grant_type, bad body)
//	400 unsupported_grant_type
//	401 invalid_client (+ WWW-Authenticate: Basic realm="fulfilment" for Basic)
//	405 with Allow: POST; 413 for a body over 8 KiB; 408 for a body not
//	    received within read_timeout
//	429 invalid_client with Retry-After: a failed attempt after too many
//	    failures for its client id or address (the right credentials are
//	    never throttled)
//	503 temporarily_unavailable while the fulfilment app is not running
//
// Partners and settings come from the fulfilment app's tokens block.
type TokenHandler struct {
	// Path is the token endpoint's path, e.g. /api/auth/token. When set,
	// the handler answers only requests whose path (decoded, as Caddy's
	// path matcher reads it) is exactly Path, case included, and passes
	// every other request to the next handler: the check costs a string
	// comparison, where a path matcher in front of the handler lower-cases,
	// cleans and matches every request's path. Must be an absolute, clean
	// path. Default: none (the handler answers every request it is given).
	Path string `json:"path,omitempty"`

	// ReadTimeout bounds the wait for the request body, counted from the
	// end of the headers: 408 after it. Default 10s.
	ReadTimeout caddy.Duration `json:"read_timeout,omitempty"`

	app         *fulfilment.App
	logger      *zap.Logger
	readTimeout time.Duration
}

// CaddyModule returns the Caddy module information.
func (*TokenHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_token",
		New: func() caddy.Module { return new(TokenHandler) },
	}
}

// Provision finds the fulfilment app.
func (h *TokenHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := h.Validate(); err != nil {
		return err
	}
	if err := fulfilhttp.CheckReadTimeout(h.ReadTimeout); err != nil {
		return err
	}
	h.readTimeout = fulfilhttp.BodyReadTimeout(h.ReadTimeout, fulfilhttp.DefaultBodyReadTimeout)
	var err error
	h.app, err = fulfilhttp.LoadApp(ctx)
	return err
}

// tokenResponse is the RFC 6749 §5.1 success body.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// oauthError is the RFC 6749 §5.2 error body.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// writeTokenJSON answers status with v; token answers are never cached
// (RFC 6749 §5.1: Cache-Control: no-store and Pragma: no-cache).
func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Pragma", "no-cache")
	fulfilhttp.WriteJSON(w, status, "application/json", v)
}

func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	fulfilhttp.Metrics().TokenAnswer(status, code, false)
	writeTokenJSON(w, status, oauthError{Error: code, Description: desc})
}

// Answers reports whether the endpoint answers a request for path: its
// own path, or any path when it has none.
func (h *TokenHandler) Answers(path string) bool {
	return h.Path == "" || path == h.Path
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *TokenHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if !h.Answers(r.URL.Path) {
		return next.ServeHTTP(w, r)
	}
	svc := h.app.TokenService()
	if svc == nil {
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the gateway is starting or stopping")
		return nil
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "the token endpoint accepts only POST")
		return nil
	}
	if len(r.Header.Values("Authorization")) > 1 {
		// Which one would count is a guess every other party (a proxy, a
		// log, the guard) may make differently: refuse, as the guard does.
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "send at most one Authorization header")
		return nil
	}
	body, err := fulfilhttp.ReadBody(w, r, tokens.MaxTokenRequestBody, h.readTimeout, h.logger)
	switch {
	case errors.Is(err, fulfilhttp.ErrBodyTooLarge):
		writeOAuthError(w, http.StatusRequestEntityTooLarge, "invalid_request", "the request body is larger than 8 KiB")
		return nil
	case errors.Is(err, fulfilhttp.ErrBodyTimeout):
		writeOAuthError(w, http.StatusRequestTimeout, "invalid_request", "the request body did not arrive in time")
		return nil
	case err != nil:
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the request body could not be read")
		return nil
	}

	req, rerr := tokens.ParseTokenRequest(r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body)
	if rerr != nil && rerr.Status != http.StatusUnauthorized {
		writeOAuthError(w, rerr.Status, rerr.Code, rerr.Description)
		return nil
	}
	client, ok := tokens.Client{}, false
	if rerr == nil {
		client, ok = svc.Authenticate(req.ClientID, req.ClientSecret)
	}
	if !ok {
		// Only a failure is throttled: the right credentials always get
		// their token, however many failures others made in their name.
		clientID, basic := req.ClientID, req.Basic
		if rerr != nil {
			clientID, basic = rerr.ClientID, rerr.Challenge
		}
		h.refuseClient(w, r, svc.Throttle(), clientID, basic)
		return nil
	}
	tok, err := svc.Token(client)
	if err != nil {
		h.logger.Error("issuing token", zap.String("client_id", client.ID), zap.Error(err))
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "the token could not be issued")
		return nil
	}
	caddyhttp.SetVar(r.Context(), fulfilhttp.ClientIDVar, client.ID)
	caddyhttp.SetVar(r.Context(), fulfilhttp.PartnerIDVar, client.PartnerID)
	if ce := h.logger.Check(zapcore.DebugLevel, "token issued"); ce != nil {
		ce.Write(zap.String("client_id", client.ID), zap.String("partner_id", client.PartnerID), zap.Bool("reused", tok.Reused))
	}
	fulfilhttp.Metrics().TokenAnswer(http.StatusOK, "", tok.Reused)
	writeTokenJSON(w, http.StatusOK, tokenResponse{AccessToken: tok.AccessToken, TokenType: "Bearer", ExpiresIn: tok.ExpiresIn})
	return nil
}

// refuseClient answers a failed client authentication: 401 invalid_client
// (with the Basic challenge when the client used Basic), or 429 with
// Retry-After once the client id or the address is over its failure
// limit. The 429 body is the same invalid_client error: the attempt failed,
// and RFC 6749 §5.2 has no code of its own for "too many".
func (h *TokenHandler) refuseClient(w http.ResponseWriter, r *http.Request, th *tokens.Throttle, clientID string, basic bool) {
	addr := fulfilhttp.ClientAddr(r)
	if wait := th.Failed(clientID, addr); wait > 0 {
		h.logFailure("token request throttled", clientID, addr)
		w.Header().Set("Retry-After", strconv.Itoa(tokens.RetryAfterSeconds(wait)))
		writeOAuthError(w, http.StatusTooManyRequests, "invalid_client",
			"too many failed attempts; retry after the number of seconds in Retry-After")
		return
	}
	h.logFailure("client authentication failed", clientID, addr)
	if basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="fulfilment"`)
	}
	writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
}

// logFailure logs a refused token request: client id and address only,
// never the secret.
func (h *TokenHandler) logFailure(msg, clientID, addr string) {
	if ce := h.logger.Check(zapcore.InfoLevel, msg); ce != nil {
		ce.Write(zap.String("client_id", clientID), zap.String("remote_ip", addr))
	}
}

// Validate checks Path: absolute and clean (no "//", "." or ".." segment,
// no trailing slash), so that it names one path as partners write it.
func (h *TokenHandler) Validate() error {
	if h.Path != "" && (h.Path[0] != '/' || path.Clean(h.Path) != h.Path) {
		return fmt.Errorf("fulfilment_token: path %q: must be an absolute, clean path such as /api/auth/token", h.Path)
	}
	return nil
}

// AnswersOnlyItsPath reports whether the handler passes requests for other
// paths than its own to the next handler (Path is set), so that its route
// needs no path matcher.
func (h *TokenHandler) AnswersOnlyItsPath() bool { return h.Path != "" }

// Interface guards
var (
	_ caddy.Provisioner           = (*TokenHandler)(nil)
	_ caddy.Validator             = (*TokenHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*TokenHandler)(nil)
	_ caddyfile.Unmarshaler       = (*TokenHandler)(nil)
)
