package portal

import (
	"errors"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
)

// signInRoutes: the sign-in page a link opens, the exchange of the link for
// a session, and sign-out.
//
// Opening a link (GET) only shows a page with a button: the link is used
// when the partner presses it (POST), so a mail scanner or chat preview
// that fetches the link does not use it up, and the session cookie is set
// by a same-site request (a SameSite=Strict cookie set while following a
// link from another site is not sent on the redirect that follows).
func (h *Handler) signInRoutes() []route {
	return []route{
		{pattern: "GET /signin", public: true, handle: h.signInPage},
		{pattern: "POST /signin", public: true, handle: h.signIn},
		{pattern: "POST /signout", handle: h.signOut},
	}
}

type signInData struct {
	Token     string
	SignedOut bool
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	return pc.render(w, http.StatusOK, "signin", signInData{Token: r.URL.Query().Get("token"),
		SignedOut: r.URL.Query().Get("done") == "signed_out"})
}

// signIn exchanges the link for a session, sets the cookie and redirects
// to the overview (so the link leaves the address bar). Failures from one
// address beyond 10 a minute answer 429.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	addr := clientAddr(r)
	ns, err := pc.Portal.Exchange(r.PostForm.Get("token"), h.limits, addr, r.UserAgent())
	if err == nil {
		if p, ok := pc.Tokens.Partner(ns.Partner); !ok || p.Disabled {
			if serr := pc.Portal.SignOut(ns.Session); serr != nil {
				return serr
			}
			err = portal.ErrInvalidLink
		}
	}
	if errors.Is(err, portal.ErrInvalidLink) {
		portalMetrics().signIn("invalid_link")
		h.logger.Info("portal sign-in refused", zap.String("addr", addr))
		if wait := h.throttle.Failed("", addr); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(tokens.RetryAfterSeconds(wait)))
			return errStatus(http.StatusTooManyRequests, "Too many failed sign-ins from your address. Wait a minute and try again.")
		}
		return errStatus(http.StatusBadRequest, "This sign-in link is invalid, has expired or was already used. Ask your warehouse for a new one.")
	}
	if err != nil {
		portalMetrics().signIn("error")
		return err
	}
	portalMetrics().signIn("ok")
	pc.Session = ns.Session
	pc.Partner.ID = ns.Partner
	if err := pc.audit("sign_in", ns.ID, "ok", "from "+addr); err != nil {
		return err
	}
	setSessionCookie(w, r, ns.Token, ns.Expires)
	return pc.redirect(w, "/")
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	if err := pc.Portal.SignOut(pc.Session); err != nil {
		return err
	}
	if err := pc.audit("sign_out", pc.Session.ID, "ok", ""); err != nil {
		return err
	}
	clearSessionCookie(w, r)
	return pc.redirect(w, "/signin?done=signed_out")
}
