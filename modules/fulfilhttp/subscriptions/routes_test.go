package subscriptions

import (
	"net/http"
	"testing"
)

// Each path of the handler finds its route (and an item's id); a path
// below an item is the handler's but has no route; every other path,
// however close, belongs to the next handler.
func TestMatchFindsEachPathsRoute(t *testing.T) {
	for _, tt := range []struct {
		path   string
		route  *route
		id     string
		ours   bool
		reason string
	}{
		{openAPIPath, openAPIRoute, "", true, "the OpenAPI document"},
		{subscriptionsPath, collectionRoute, "", true, "the collection"},
		{subscriptionsPath + "/", collectionRoute, "", true, "the collection with a trailing slash"},
		{subscriptionsPath + "/sub_1", itemRoute, "sub_1", true, "one subscription"},
		{subscriptionsPath + "/sub_1/x", nil, "", true, "below a subscription (404)"},
		{subscriptionsPath + "x", nil, "", false, "a longer name"},
		{openAPIPath + "/x", nil, "", false, "below the document"},
		{"/api/fulfilment/v3/subscriptions", nil, "", false, "another version"},
		{"/api/fulfilment/v4/products", nil, "", false, "a resource"},
	} {
		rt, id, ours := match(tt.path)
		if rt != tt.route || id != tt.id || ours != tt.ours {
			t.Errorf("%s (%s): route %p id %q ours %v; want route %p id %q ours %v",
				tt.path, tt.reason, rt, id, ours, tt.route, tt.id, tt.ours)
		}
	}
}

// On every route, a method the route does not list answers 405 with Allow
// naming exactly the route's methods, and never reaches an action.
func TestEveryRouteRefusesOtherMethodsWithItsAllow(t *testing.T) {
	c := newSubsClient(t, startTestApp(t, loopbackHooks()))
	paths := map[*route]string{openAPIRoute: openAPIPath, collectionRoute: subscriptionsPath, itemRoute: subscriptionsPath + "/sub_x"}
	allMethods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "get"}
	for rt, path := range paths {
		for _, m := range allMethods {
			if rt.action(m) != nil {
				continue
			}
			w := c.do("p1", m, path, "application/json", "{}")
			problemOf(t, w, http.StatusMethodNotAllowed)
			if got := w.Header().Get("Allow"); got != rt.allow {
				t.Errorf("%s %s: Allow %q, want %q", m, path, got, rt.allow)
			}
		}
	}
	for rt, want := range map[*route]string{openAPIRoute: "GET, HEAD", collectionRoute: "GET, HEAD, POST", itemRoute: "GET, HEAD, DELETE"} {
		if rt.allow != want {
			t.Errorf("route of %s serves %q, want %q", paths[rt], rt.allow, want)
		}
	}
}
