package portal

import (
	"net/http"
	"path"
)

// route is one page or action of the portal. pattern is a net/http
// ServeMux pattern with its method ("GET /settings/integrations"), relative
// to where the operator placed the portal. Routes with public set need no
// session (sign-in, assets); every other route runs only for a live
// session, and one with a method other than GET or HEAD only with the
// session's CSRF token and a same-origin request (see request.go).
type route struct {
	pattern string
	public  bool
	handle  pageFunc
}

// navItem is an entry of the navigation bar; path is relative to the
// portal, like a route's.
type navItem struct {
	Label string
	Path  string
}

// routes lists every route of the portal: each part adds its own.
func (h *Handler) routes() []route {
	var rs []route
	rs = append(rs, h.signInRoutes()...)
	rs = append(rs, h.overviewRoutes()...)
	rs = append(rs, h.integrationRoutes()...)
	rs = append(rs, h.webhookRoutes()...)
	rs = append(rs, staticRoutes()...)
	return rs
}

// nav is the navigation bar, in order.
func nav() []navItem {
	return []navItem{
		{Label: "Overview", Path: "/"},
		{Label: "Integrations", Path: "/settings/integrations"},
		{Label: "Webhooks", Path: "/webhooks"},
		{Label: "Events", Path: "/events"},
	}
}

// buildMux registers the routes, each wrapped in the checks its kind
// needs, and a 404 page for everything else.
func (h *Handler) buildMux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range h.routes() {
		mux.Handle(rt.pattern, h.wrap(rt))
	}
	mux.Handle("/", h.wrap(route{pattern: "/", public: true, handle: h.notFound}))
	return mux
}

// cleanPath reports whether p is already clean: ServeMux would answer an
// unclean path with a redirect that loses the portal's prefix, so such
// paths get the 404 page instead.
func cleanPath(p string) bool {
	return p != "" && p[0] == '/' && (p == "/" || path.Clean(p) == p || path.Clean(p)+"/" == p)
}
