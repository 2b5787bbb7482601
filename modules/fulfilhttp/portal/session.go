package portal

import (
	"net/http"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
)

// Names of the session cookie. Over https it carries the __Host- prefix:
// the browser then accepts it only with Secure, Path=/ and no Domain, so
// no other host or path can set or shadow it.
const (
	cookieHTTPS = "__Host-fulfilgate-portal"
	cookieHTTP  = "fulfilgate-portal"
)

func cookieName(r *http.Request) string {
	if r.TLS != nil {
		return cookieHTTPS
	}
	return cookieHTTP
}

// session returns the live session of r's cookie (portal.ErrNoSession
// without one).
func (h *Handler) session(r *http.Request, svc *portal.Service) (portal.Session, error) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return portal.Session{}, portal.ErrNoSession
	}
	return svc.Check(c.Value)
}

// setSessionCookie sets the session cookie: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page sends it), Secure over https,
// for the whole host (the __Host- prefix needs Path=/), living as long as
// the session at most.
func setSessionCookie(w http.ResponseWriter, r *http.Request, token string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: token, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int(time.Until(expires) / time.Second)})
}

// clearSessionCookie tells the browser to drop the session cookie.
func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: -1})
}
