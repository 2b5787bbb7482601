package portal

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// pageFunc serves one route. A returned error is logged and answered with
// the error page (an *httpError with its status and message, else 500).
type pageFunc func(w http.ResponseWriter, r *http.Request, pc *pageContext) error

// pageContext is what a page gets: the services, the session and partner
// (for routes that are not public), the portal's base path, and helpers to
// render, redirect and audit.
type pageContext struct {
	h *Handler
	r *http.Request
	// Base is the path the portal is served under ("/portal"), taken from
	// the request before handle_path stripped it.
	Base    string
	Session portal.Session
	// Partner is the session's partner: every action works on it alone,
	// whatever ids a form carries.
	Partner tokens.Partner
	Portal  *portal.Service
	Tokens  *tokens.Service
	// Webhooks is the webhook service (nil while it is not running).
	Webhooks *webhooks.Service
}

// httpError is an error with the status and the message the partner sees.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errStatus(status int, msg string) error { return &httpError{status: status, msg: msg} }

// wrap runs the checks of rt's kind before its handler: a clean path, the
// services running, for a private route a live session of an existing,
// enabled partner, and for a state-changing request a same-origin request,
// a bounded form body and (private routes) the session's CSRF token.
func (h *Handler) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pc := &pageContext{h: h, r: r, Base: basePath(r)}
		err := h.prepare(w, r, rt, pc)
		if err == nil {
			err = rt.handle(w, r, pc)
		}
		if err != nil {
			h.fail(w, r, pc, err)
		}
	})
}

// errSignIn sends a request without a live session to the sign-in page.
var errSignIn = errors.New("sign-in needed")

func (h *Handler) prepare(w http.ResponseWriter, r *http.Request, rt route, pc *pageContext) error {
	if !cleanPath(r.URL.Path) {
		return errStatus(http.StatusNotFound, "There is no such page.")
	}
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead
	if changes {
		if !sameOrigin(r) {
			return errStatus(http.StatusForbidden, "This form was sent from another site and was refused.")
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return errStatus(http.StatusRequestEntityTooLarge, "The form is too large.")
			}
			return errStatus(http.StatusBadRequest, "The form could not be read.")
		}
	}
	if rt.public {
		if rt.pattern != "GET /static/{file}" {
			pc.Portal = h.app.PortalService()
			pc.Tokens = h.app.TokenService()
			if pc.Portal == nil || pc.Tokens == nil {
				return errStatus(http.StatusServiceUnavailable, "The portal is starting or stopping; try again in a moment.")
			}
		}
		return nil
	}
	pc.Portal, pc.Tokens, pc.Webhooks = h.app.PortalService(), h.app.TokenService(), h.app.WebhookService()
	if pc.Portal == nil || pc.Tokens == nil {
		return errStatus(http.StatusServiceUnavailable, "The portal is starting or stopping; try again in a moment.")
	}
	sess, err := h.session(r, pc.Portal)
	if err != nil {
		if errors.Is(err, portal.ErrNoSession) {
			clearSessionCookie(w, r)
			return errSignIn
		}
		return err
	}
	p, ok := pc.Tokens.Partner(sess.Partner)
	if !ok || p.Disabled {
		// The partner was deleted or disabled after sign-in: the session
		// ends with it.
		if err := pc.Portal.SignOut(sess); err != nil {
			return err
		}
		clearSessionCookie(w, r)
		return errSignIn
	}
	pc.Session, pc.Partner = sess, p
	if changes && !sess.CheckCSRF(r.PostForm.Get(csrfField)) {
		portalMetrics().action("csrf", "refused")
		h.logger.Warn("portal form refused: missing or wrong CSRF token", zap.String("partner_id", p.ID),
			zap.String("session_id", sess.ID), zap.String("path", r.URL.Path))
		return errStatus(http.StatusForbidden, "This form has expired or was not sent by the portal. Reload the page and try again.")
	}
	return nil
}

// csrfField is the form field that carries the CSRF token.
const csrfField = "csrf_token"

// sameOrigin reports whether a state-changing request comes from a page of
// this origin. A browser that sends Sec-Fetch-Site says so itself:
// same-origin (or none, a request the user made) passes, anything else is
// refused. Without it (an older browser), Origin must name this origin
// ("null", which browsers send under the portal's no-referrer policy, is
// refused). A request with neither header (not a browser) is left to the
// CSRF token.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	switch origin {
	case "":
		return true
	case "null":
		return false
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && u.Scheme == requestScheme(r)
}

// requestScheme is "https" when the request came over TLS.
func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// basePath is the prefix handle_path (or a similar strip) removed before
// the portal saw the request: the original path minus the current one.
func basePath(r *http.Request) string {
	orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request)
	if !ok || orig.URL == nil {
		return ""
	}
	base, found := strings.CutSuffix(orig.URL.Path, r.URL.Path)
	if !found {
		return ""
	}
	return strings.TrimSuffix(base, "/")
}

// clientAddr is the address a request came from.
func clientAddr(r *http.Request) string { return fulfilhttp.ClientAddr(r) }

// audit writes an entry of the partner's audit log; a failure to write it
// fails the request (the change is done, but the partner is told).
func (pc *pageContext) audit(action, target, outcome, detail string) error {
	portalMetrics().action(action, outcome)
	return pc.Portal.Record(portal.AuditRecord{Partner: pc.Partner.ID, Actor: portal.ActorPartner, Session: pc.Session.ID,
		Action: action, Target: target, Outcome: outcome, Detail: detail})
}

// refused records a refused action in the partner's audit log and returns
// page, the error page that tells the partner; a failure to record it fails
// the request instead.
func (pc *pageContext) refused(action, target, outcome, detail string, page error) error {
	if err := pc.audit(action, target, outcome, detail); err != nil {
		return err
	}
	return page
}

// redirect answers 303 to a path of the portal (relative to it).
func (pc *pageContext) redirect(w http.ResponseWriter, p string) error {
	http.Redirect(w, pc.r, pc.Base+p, http.StatusSeeOther)
	return nil
}
