package adminapi

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func init() {
	caddy.RegisterModule(adminFeeds{})
}

// adminFeedsBase is the admin API route of the change feeds.
const adminFeedsBase = "/fulfilment/feeds"

// adminFeeds is the admin API of the upstream change feeds, for operators:
//
//	GET /fulfilment/feeds         → 200 {"feeds":[<status>, ...]}
//	GET /fulfilment/feeds/<name>  → 200 <status>; 404 for an unknown feed
//	POST /fulfilment/feeds/<name>/reset {"cursor":"","forget_seen":false}
//	                              → 200 <status>: sets the cursor ("" = from
//	                                the beginning); forget_seen also forgets
//	                                which change ids were done (for a WMS whose
//	                                feed was rebuilt and reuses ids)
//
// A status carries the feed's mode (poll or push), URL (without user info
// or query), cursor, lag_seconds, last error and when, consecutive errors,
// a warning (e.g. a cursor that went backwards), counters since start-up
// (pages, changes_read, duplicates, events_produced, deliveries_queued,
// rejected_changes), rejected_total (ever) and the last 100 rejected
// changes with their reasons; with a database several instances share, also
// which instance reads the feed (reader, reader_here, lease_until,
// lease_token, lease_checked_at). Another method answers 405; 503 when no
// fulfilment app runs.
type adminFeeds struct{}

// CaddyModule returns the Caddy module information.
func (adminFeeds) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.fulfilment_feeds",
		New: func() caddy.Module { return new(adminFeeds) },
	}
}

// Routes returns the admin routes.
func (adminFeeds) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveAdminFeeds)
	return []caddy.AdminRoute{{Pattern: adminFeedsBase, Handler: h}, {Pattern: adminFeedsBase + "/", Handler: h}}
}

func serveAdminFeeds(w http.ResponseWriter, r *http.Request) error {
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, adminFeedsBase), "/")
	name, op, _ := strings.Cut(name, "/")
	method := http.MethodGet
	if op == "reset" {
		method = http.MethodPost
	} else if op != "" {
		return apiErrorf(http.StatusNotFound, "unknown feed operation %q; use reset", op)
	}
	if err := requireMethod(w, r, method); err != nil {
		return err
	}
	app, err := runningApp()
	if err != nil {
		return err
	}
	if name == "" {
		out := []feed.Status{}
		for _, f := range app.FeedReaders() {
			out = append(out, f.Status())
		}
		return writeAdminJSON(w, http.StatusOK, map[string]any{"feeds": out})
	}
	f := app.FeedReader(name)
	if f == nil {
		return apiErrorf(http.StatusNotFound, "no feed named %q", name)
	}
	if op == "reset" {
		var req struct {
			Cursor     string `json:"cursor"`
			ForgetSeen bool   `json:"forget_seen"`
		}
		if err := decodeAdminJSON(r, &req); err != nil {
			return err
		}
		if err := f.Reset(req.Cursor, req.ForgetSeen); err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
	}
	return writeAdminJSON(w, http.StatusOK, f.Status())
}

// Interface guards
var _ caddy.AdminRouter = adminFeeds{}
