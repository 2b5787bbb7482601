package fulfilment

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	maphandler "github.com/caddyserver/caddy/v2/modules/caddyhttp/map"
)

// The configuration checks of the HTTP routes, run when the fulfilment app
// is provisioned (so `caddy validate` shows them). They read the routes of
// every server of the http app in the order Caddy runs them:
//
//   - fulfilment_version with no fulfilment_auth before it on any way a
//     request can reach it is refused: every request it got would answer
//     500 (it forwards nothing without the guard's identity).
//   - fulfilment_version that only some requests reach through the guard
//     (the guard is in an earlier route with matchers of its own) is
//     warned about: the others answer 500.
//   - fulfilment_version or fulfilment_gateway with no handler after it
//     that answers the request (reverse_proxy, respond, ...) is warned
//     about: Caddy then answers an empty 200, and nothing reaches the WMS.
//   - fulfilment_gateway runs the guard itself: a fulfilment_version after
//     it has the guard before it.
//   - fulfilment_gateway in a server that also has any of its jobs as a
//     directive of its own is warned about: a request that meets both is
//     guarded or mapped twice and refused.
//   - reverse_proxy in a site with fulfilment_gateway (a server, or a
//     route of its own hosts within it) that some requests reach without
//     passing the gateway (the gateway has a matcher, or is in a handle
//     block the proxy is not in) is warned about: those requests reach the
//     upstream without a verified partner and without the version mapping,
//     the WMS's own paths included.
//   - fulfilment_token without a path of its own in a route without a path
//     matcher (its own or an enclosing route's) is warned about: it answers
//     every request of the route as the token endpoint, and nothing after
//     it runs.
//   - fulfilment_portal without a prefix of its own, in a route without a
//     path matcher and with handlers after it, is warned about: it answers
//     every request of the route as a portal page, and those handlers never
//     run. (Alone, it is a site of its own.)
//   - map with a destination named fulfilment.* is warned about: those are
//     the version mapping's placeholders. A map runs before the mapping
//     (a Caddyfile orders it first), so its {fulfilment.version} and
//     {fulfilment.resource} answer instead of the mapping's, and its
//     {fulfilment.upstream} is replaced by the mapping's.
//
// Only a missing guard is refused: it is the one case in which a request
// could have reached the WMS without an identity had the version handler
// not refused it. The checks cover the servers' primary routes and the
// subroutes within them (handle, route, handle_path); error routes and
// named routes are not checked (the version handler's own check still
// refuses every request that lacks the guard's identity).

// routeNode is a route as the checks see it.
type routeNode struct {
	matched   bool   // it has matchers: not every request runs it
	pathMatch bool   // every one of its matcher sets has a path matcher
	hostMatch bool   // every one of its matcher sets has a host matcher: a site of its own
	group     string // routes of one group are mutually exclusive
	terminal  bool
	handlers  []handlerNode
}

// handlerNode is a handler of a route.
type handlerNode struct {
	name    string      // module name: "fulfilment_version", "subroute", ...
	routes  []routeNode // a subroute's routes
	ownPath bool        // it answers only its own path and passes on the rest
	writes  []string    // a map's destinations named fulfilment.*, without braces
}

// pathAnswerer is a handler that answers only its own path, and passes
// every other request to the next handler (fulfilment_token with a path).
type pathAnswerer interface{ AnswersOnlyItsPath() bool }

// The routes are read while the http app is being provisioned as well as
// after: a route whose handlers are not provisioned yet still has them as
// JSON (and the same for matchers), so each part is read from whichever
// form it has.

func routeNodes(routes caddyhttp.RouteList) ([]routeNode, error) {
	nodes := make([]routeNode, 0, len(routes))
	for i := range routes {
		n, err := routeNodeOf(&routes[i])
		if err != nil {
			return nil, fmt.Errorf("route %d: %w", i, err)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func routeNodeOf(r *caddyhttp.Route) (routeNode, error) {
	n := routeNode{group: r.Group, terminal: r.Terminal}
	if r.MatcherSetsRaw != nil {
		n.matched = len(r.MatcherSetsRaw) > 0
		n.pathMatch, n.hostMatch = n.matched, n.matched
		for _, set := range r.MatcherSetsRaw {
			_, p := set["path"]
			_, re := set["path_regexp"]
			_, host := set["host"]
			n.pathMatch = n.pathMatch && (p || re)
			n.hostMatch = n.hostMatch && host
		}
	} else {
		n.matched = len(r.MatcherSets) > 0
		n.pathMatch, n.hostMatch = n.matched, n.matched
		for _, set := range r.MatcherSets {
			n.pathMatch = n.pathMatch && slices.ContainsFunc(set, func(m any) bool {
				name := caddy.GetModuleName(m)
				return name == "path" || name == "path_regexp"
			})
			n.hostMatch = n.hostMatch && slices.ContainsFunc(set, func(m any) bool {
				return caddy.GetModuleName(m) == "host"
			})
		}
	}
	if r.HandlersRaw != nil {
		for i, raw := range r.HandlersRaw {
			h, err := handlerNodeOfJSON(raw)
			if err != nil {
				return n, fmt.Errorf("handler %d: %w", i, err)
			}
			n.handlers = append(n.handlers, h)
		}
		return n, nil
	}
	for i, h := range r.Handlers {
		node := handlerNode{name: caddy.GetModuleName(h)}
		if pa, ok := h.(pathAnswerer); ok {
			node.ownPath = pa.AnswersOnlyItsPath()
		}
		if m, ok := h.(*maphandler.Handler); ok {
			node.writes = fulfilmentPlaceholders(m.Destinations)
		}
		if sr, ok := h.(*caddyhttp.Subroute); ok {
			var err error
			if node.routes, err = routeNodes(sr.Routes); err != nil {
				return n, fmt.Errorf("handler %d: %w", i, err)
			}
		}
		n.handlers = append(n.handlers, node)
	}
	return n, nil
}

func handlerNodeOfJSON(raw json.RawMessage) (handlerNode, error) {
	var h struct {
		Handler string              `json:"handler"`
		Routes  caddyhttp.RouteList `json:"routes"`
		Path    string              `json:"path"`         // fulfilment_token's own path
		Prefix  string              `json:"prefix"`       // fulfilment_portal's own prefix
		Dests   []string            `json:"destinations"` // map's
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return handlerNode{}, err
	}
	node := handlerNode{name: h.Handler, ownPath: h.Handler == "fulfilment_token" && h.Path != "" ||
		h.Handler == "fulfilment_portal" && h.Prefix != ""}
	if h.Handler == "map" {
		node.writes = fulfilmentPlaceholders(h.Dests)
	}
	if h.Handler == "subroute" {
		var err error
		if node.routes, err = routeNodes(h.Routes); err != nil {
			return node, err
		}
	}
	return node, nil
}

// fulfilmentPlaceholders returns the names in dests (a map's
// destinations, with braces before provisioning and without after) that
// are the fulfilment.* placeholders, without braces.
func fulfilmentPlaceholders(dests []string) []string {
	var names []string
	for _, d := range dests {
		name := strings.TrimSuffix(strings.TrimPrefix(d, "{"), "}")
		if strings.HasPrefix(name, "fulfilment.") {
			names = append(names, name)
		}
	}
	return names
}

// guardRan says whether the Bearer guard ran before a point of a route list,
// for every request that reaches that point.
type guardRan int

const (
	guardNever  guardRan = iota // on no way there
	guardMaybe                  // on some ways there
	guardAlways                 // on every way there
)

// continuation is what runs after a handler: the rest of its route's
// handlers, then (unless its route is terminal) the later routes of its
// list, then what follows the list's subroute.
type continuation struct {
	handlers []handlerNode
	routes   []routeNode
	parent   *continuation
}

// routeFindings are the outcome of the checks: refusals and warnings.
type routeFindings struct {
	errors, warnings []string
	gateway          bool // the server being walked has fulfilment_gateway
}

// checkHTTPRoutes checks the primary routes of every server of app.
func checkHTTPRoutes(app *caddyhttp.App) (routeFindings, error) {
	var f routeFindings
	for _, name := range slices.Sorted(maps.Keys(app.Servers)) {
		srv := app.Servers[name]
		routes, err := routeNodes(srv.Routes)
		if err != nil {
			return f, fmt.Errorf("server %s: %w", name, err)
		}
		where := "server " + name
		if len(srv.Listen) > 0 {
			where += " (" + strings.Join(srv.Listen, " ") + ")"
		}
		gateway := handlerIn(routes, "fulfilment_gateway")
		f.gateway = gateway
		f.walk(routes, guardNever, false, nil, where)
		if jobs := separateJobs(routes); gateway && len(jobs) > 0 {
			f.warnings = append(f.warnings, fmt.Sprintf("%s: fulfilment_gateway and %s in one server: a request that meets both is guarded or mapped twice (the second guard finds no token: 401; the second mapping finds no resource: 404); give each job once, in the gateway", where, strings.Join(jobs, ", ")))
		}
	}
	return f, nil
}

// gatewayJobs are the directives fulfilment_gateway runs as its jobs.
var gatewayJobs = []string{"fulfilment_portal", "fulfilment_token", "fulfilment_auth", "fulfilment_subscriptions", "fulfilment_version"}

// separateJobs lists the gateway's jobs that routes (subroutes included)
// have as handlers of their own, in gatewayJobs' order.
func separateJobs(routes []routeNode) []string {
	var found []string
	for _, job := range gatewayJobs {
		if handlerIn(routes, job) {
			found = append(found, job)
		}
	}
	return found
}

// handlerIn reports whether a handler named name is in routes or their
// subroutes.
func handlerIn(routes []routeNode, name string) bool {
	for _, r := range routes {
		for _, h := range r.handlers {
			if h.name == name || handlerIn(h.routes, name) {
				return true
			}
		}
	}
	return false
}

// walk checks routes, which run with the guard having run as guard says
// and with or without a path matcher on the way (pathMatched), followed by
// after; it returns whether the guard has run once the list is done.
func (f *routeFindings) walk(routes []routeNode, guard guardRan, pathMatched bool, after *continuation, where string) guardRan {
	// Routes of one group are mutually exclusive: a guard in a route of
	// the group never ran before another route of the same group.
	groups := map[string]bool{} // groups with a route that runs the guard
	outer := f.gateway
	defer func() { f.gateway = outer }()
	for i, r := range routes {
		at := fmt.Sprintf("%s, route %d", where, i)
		// A route of its own host (a Caddyfile site block) is a site: whether
		// a gateway guards its proxies is a question within it.
		f.gateway = outer
		if r.hostMatch {
			f.gateway = handlerIn(routes[i:i+1], "fulfilment_gateway")
		}
		start := guard
		for name := range groups {
			if name != r.group {
				start = max(start, guardMaybe)
			}
		}
		next := &continuation{routes: routes[i+1:], parent: after}
		if r.terminal {
			next = nil // nothing after this route runs
		}
		g := start
		for j, h := range r.handlers {
			hat := fmt.Sprintf("%s, handler %d", at, j)
			switch h.name {
			case "fulfilment_auth":
				g = guardAlways
			case "fulfilment_version":
				f.checkVersion(hat, g, &continuation{handlers: r.handlers[j+1:], parent: next})
			case "fulfilment_gateway":
				// It runs the guard and then the version mapping itself.
				g = guardAlways
				if !(&continuation{handlers: r.handlers[j+1:], parent: next}).answers() {
					f.warnings = append(f.warnings, hat+": fulfilment_gateway has no handler after it that answers the request (such as reverse_proxy), so Caddy answers an empty 200 and nothing reaches the upstream")
				}
			case "reverse_proxy":
				// With a gateway in the server, the guard runs only in it.
				if f.gateway && g != guardAlways {
					f.warnings = append(f.warnings, hat+": reverse_proxy runs for requests that did not pass fulfilment_gateway (the gateway has a matcher, or is in a route or handle block the proxy is not in), so they reach the upstream without a verified partner and without the version mapping, the WMS's own paths included; put the gateway, without a matcher, before the proxy in the same route")
				}
			case "fulfilment_token":
				if !pathMatched && !r.pathMatch && !h.ownPath {
					f.warnings = append(f.warnings, hat+": fulfilment_token has no path matcher, so it answers every request of its route as the token endpoint and nothing after it runs; give it its path (path /api/auth/token in its block) or a path matcher")
				}
			case "fulfilment_portal":
				if !pathMatched && !r.pathMatch && !h.ownPath && j < len(r.handlers)-1 {
					f.warnings = append(f.warnings, hat+": fulfilment_portal has no prefix and no path matcher, so it answers every request of its route as a portal page and nothing after it runs; give it its prefix (prefix /portal in its block), place it under handle_path, or give it a site of its own")
				}
			case "map":
				if len(h.writes) > 0 {
					f.warnings = append(f.warnings, fmt.Sprintf("%s: map writes {%s}, a placeholder of the version mapping: a map runs before the mapping, so its {fulfilment.version} and {fulfilment.resource} answer instead of the mapping's, and its {fulfilment.upstream} is replaced by the mapping's; give the map's output a name of your own", hat, strings.Join(h.writes, "}, {")))
				}
			case "subroute":
				g = f.walk(h.routes, g, pathMatched || r.pathMatch,
					&continuation{handlers: r.handlers[j+1:], parent: next}, hat+", subroute")
			}
		}
		switch {
		case r.group != "":
			if g > start {
				groups[r.group] = true
			}
		case r.matched:
			if g > start {
				guard = max(guard, guardMaybe)
			}
		default:
			guard = g
			if r.terminal {
				return guard // no later route runs
			}
		}
	}
	for range groups {
		guard = max(guard, guardMaybe)
	}
	return guard
}

func (f *routeFindings) checkVersion(at string, guard guardRan, after *continuation) {
	switch guard {
	case guardNever:
		f.errors = append(f.errors, at+": fulfilment_version has no fulfilment_auth before it, so it would refuse every request (500) instead of forwarding it without a verified identity; put fulfilment_auth before it in the same route")
	case guardMaybe:
		f.warnings = append(f.warnings, at+": fulfilment_version runs after fulfilment_auth only for some requests (the guard is in an earlier route with matchers); the others answer 500; put fulfilment_auth before it in the same route")
	}
	if !after.answers() {
		f.warnings = append(f.warnings, at+": fulfilment_version has no handler after it that answers the request (such as reverse_proxy), so Caddy answers an empty 200 and nothing reaches the upstream")
	}
}

// passThrough are handlers that always call the next one: they never answer
// a request themselves (on success).
var passThrough = []string{
	"fulfilment_auth", "fulfilment_version", "fulfilment_subscriptions", "fulfilment_gateway",
	"headers", "rewrite", "vars", "map", "encode", "request_body", "push",
	"templates", "tracing", "intercept", "log_append", "authentication",
}

// answers reports whether a handler that may answer the request runs
// somewhere in c.
func (c *continuation) answers() bool {
	for ; c != nil; c = c.parent {
		if handlersAnswer(c.handlers) {
			return true
		}
		for _, r := range c.routes {
			if handlersAnswer(r.handlers) {
				return true
			}
		}
	}
	return false
}

func handlersAnswer(hs []handlerNode) bool {
	for _, h := range hs {
		if h.name == "subroute" {
			for _, r := range h.routes {
				if handlersAnswer(r.handlers) {
					return true
				}
			}
			continue
		}
		if !slices.Contains(passThrough, h.name) {
			return true
		}
	}
	return false
}
