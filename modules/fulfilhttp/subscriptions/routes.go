package subscriptions

import (
	"net/http"
	"strings"
)

// The handler's routes: the paths it answers and the methods each serves.
// A path that is none of them goes to the next handler; a method a route
// does not serve answers 405 with Allow, listing the route's methods.
var (
	openAPIRoute = newRoute(
		method{http.MethodGet, (*SubscriptionsHandler).serveDocument},
		method{http.MethodHead, (*SubscriptionsHandler).serveDocument})
	collectionRoute = newRoute(
		method{http.MethodGet, (*SubscriptionsHandler).list},
		method{http.MethodHead, (*SubscriptionsHandler).list},
		method{http.MethodPost, (*SubscriptionsHandler).create})
	itemRoute = newRoute(
		method{http.MethodGet, (*SubscriptionsHandler).get},
		method{http.MethodHead, (*SubscriptionsHandler).get},
		method{http.MethodDelete, (*SubscriptionsHandler).delete})
)

// action answers one method of a route for partner; id is the subscription
// id on itemRoute, "" elsewhere.
type action func(h *SubscriptionsHandler, w http.ResponseWriter, r *http.Request, partner, id string)

type method struct {
	name  string
	serve action
}

// route is one path's methods, in the order Allow lists them.
type route struct {
	methods []method
	allow   string
}

func newRoute(methods ...method) *route {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.name
	}
	return &route{methods: methods, allow: strings.Join(names, ", ")}
}

// action returns what answers name on rt, or nil if rt does not serve it.
func (rt *route) action(name string) action {
	for _, m := range rt.methods {
		if m.name == name {
			return m.serve
		}
	}
	return nil
}

// match returns the route of path and, on itemRoute, the subscription id.
// ours is false for a path of the next handler; a path below an item
// (.../subscriptions/{id}/more) is ours but has no route (404).
func match(path string) (rt *route, id string, ours bool) {
	if path == openAPIPath {
		return openAPIRoute, "", true
	}
	rest, ok := strings.CutPrefix(path, subscriptionsPath)
	switch {
	case !ok || (rest != "" && rest[0] != '/'):
		return nil, "", false
	case rest == "" || rest == "/":
		return collectionRoute, "", true
	}
	id = rest[1:]
	if strings.Contains(id, "/") {
		return nil, "", true
	}
	return itemRoute, id, true
}
