package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/portal"
)

func init() {
	caddy.RegisterModule(adminPortal{})
}

// adminPortalBase is the admin API route of the partner portal.
const adminPortalBase = "/fulfilment/portal"

// adminPortal is the admin API of the partner portal (module
// admin.api.fulfilment_portal): sign-in links, sessions and the audit log.
//
//	POST   /fulfilment/portal/links {"partner","ttl","portal_url"}  → 201 {"id","partner","token","expires","url"}
//	GET    /fulfilment/portal/sessions[?partner=]                   → 200 [session...] (no secrets)
//	DELETE /fulfilment/portal/sessions/{id}                         → 200 {"session","revoked":true}
//	GET    /fulfilment/portal/audit[?partner=&since=&limit=]        → 200 [record...], newest first
//
// ttl is a Go duration (default 15m, between 1m and 24h); portal_url is
// where the portal is served (e.g. https://gateway.example.com/portal):
// the answer's url is then the whole sign-in link, else the path below the
// portal. The link is shown only in this answer; only its hash is stored.
// A partner may have at most 5 unused links (429 beyond). since is RFC
// 3339 or a duration back from now (24h). Link creation and revocation
// are written to the audit log.
type adminPortal struct{}

// CaddyModule returns the Caddy module information.
func (adminPortal) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.fulfilment_portal",
		New: func() caddy.Module { return new(adminPortal) },
	}
}

// Routes returns the admin routes.
func (adminPortal) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveAdminPortal)
	return []caddy.AdminRoute{{Pattern: adminPortalBase + "/", Handler: h}}
}

type linkRequest struct {
	Partner   string `json:"partner"`
	TTL       string `json:"ttl,omitempty"`
	PortalURL string `json:"portal_url,omitempty"`
}

type linkAnswer struct {
	portal.Link
	URL string `json:"url"`
}

func serveAdminPortal(w http.ResponseWriter, r *http.Request) error {
	app, err := runningApp()
	if err != nil {
		return err
	}
	svc, tsvc := app.PortalService(), app.TokenService()
	if svc == nil || tsvc == nil {
		return apiError(http.StatusServiceUnavailable, errors.New("the portal is not running"))
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, adminPortalBase), "/")
	switch {
	case rest == "links":
		if err := requireMethod(w, r, http.MethodPost); err != nil {
			return err
		}
		var req linkRequest
		if err := decodeAdminJSON(r, &req); err != nil {
			return err
		}
		if p, ok := tsvc.Partner(req.Partner); !ok {
			return apiErrorf(http.StatusNotFound, "partner %q not found", req.Partner)
		} else if p.Disabled {
			return apiErrorf(http.StatusConflict, "partner %s is disabled: enable it first", req.Partner)
		}
		var ttl time.Duration
		if req.TTL != "" {
			if ttl, err = time.ParseDuration(req.TTL); err != nil {
				return apiErrorf(http.StatusBadRequest, "ttl %q: want a duration such as 15m", req.TTL)
			}
		}
		base, err := portalURL(req.PortalURL)
		if err != nil {
			return apiError(http.StatusBadRequest, err)
		}
		l, err := svc.CreateLink(req.Partner, ttl)
		switch {
		case errors.Is(err, portal.ErrInvalidTTL):
			return apiError(http.StatusBadRequest, err)
		case errors.Is(err, portal.ErrTooManyLinks):
			return apiError(http.StatusTooManyRequests, err)
		case err != nil:
			return apiError(http.StatusInternalServerError, err)
		}
		if err := svc.Record(portal.AuditRecord{Partner: req.Partner, Actor: portal.ActorOperator, Action: "create_link",
			Target: l.ID, Detail: "expires " + l.Expires.Format(time.RFC3339)}); err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
		return writeAdminJSON(w, http.StatusCreated, linkAnswer{Link: l, URL: base + "/signin?token=" + url.QueryEscape(l.Token)})
	case rest == "sessions":
		if err := requireMethod(w, r, http.MethodGet); err != nil {
			return err
		}
		ss, err := svc.Sessions(r.URL.Query().Get("partner"))
		if err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
		return writeAdminJSON(w, http.StatusOK, ss)
	case strings.HasPrefix(rest, "sessions/") && strings.Count(rest, "/") == 1:
		if err := requireMethod(w, r, http.MethodDelete); err != nil {
			return err
		}
		id := strings.TrimPrefix(rest, "sessions/")
		partner, err := svc.RevokeSession(id)
		if errors.Is(err, portal.ErrNotFound) {
			return apiErrorf(http.StatusNotFound, "session %q not found (it may have expired)", id)
		}
		if err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
		if err := svc.Record(portal.AuditRecord{Partner: partner, Actor: portal.ActorOperator, Action: "revoke_session",
			Target: id}); err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
		return writeAdminJSON(w, http.StatusOK, map[string]any{"session": id, "revoked": true})
	case rest == "audit":
		if err := requireMethod(w, r, http.MethodGet); err != nil {
			return err
		}
		q := r.URL.Query()
		since, err := parseSince(q.Get("since"), time.Now())
		if err != nil {
			return apiError(http.StatusBadRequest, err)
		}
		limit := 0
		if s := q.Get("limit"); s != "" {
			if limit, err = strconv.Atoi(s); err != nil || limit <= 0 {
				return apiErrorf(http.StatusBadRequest, "limit %q: want a positive number", s)
			}
		}
		recs, err := svc.Audit(q.Get("partner"), since, limit)
		if err != nil {
			return apiError(http.StatusInternalServerError, err)
		}
		return writeAdminJSON(w, http.StatusOK, recs)
	}
	return apiError(http.StatusNotFound, fmt.Errorf("no such portal route: %s %s", r.Method, r.URL.Path))
}

// portalURL checks the portal's base URL given with a link request and
// returns it without a trailing slash ("" when none is given).
func portalURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("portal_url %q: want the portal's absolute http(s) address, e.g. https://gateway.example.com/portal", s)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// parseSince reads an RFC 3339 time or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("since %q: want an RFC 3339 time or a duration such as 24h", s)
}
