package adminapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

func init() {
	caddy.RegisterModule(adminInstance{})
}

// adminBase is the root of the gateway's admin API.
const adminBase = "/fulfilment"

// adminRoutes lists the gateway's admin API for GET /fulfilment and for the
// answer to an unknown path under it.
var adminRoutes = []string{adminPartnersBase, adminKeysBase, strings.TrimSuffix(adminWebhooksBase, "/"), adminFeedsBase, adminPortalBase}

// adminInstance is the root of the gateway's admin API:
//
//	GET /fulfilment  → 200 {"instance":"<random id>","pid":N,"host":"...",
//	                   "started_at":"...","version":"...","running":true,
//	                   "data_dir":"...","warnings":[...],"routes":[...]}
//
// It tells which process answers (the same id appears in the log line
// "fulfilment app started"), and "warnings" names other processes that
// listen on this gateway's ports. Any other path under /fulfilment/ that no
// other part serves answers 404 naming the routes; another method 405.
type adminInstance struct{}

// CaddyModule returns the Caddy module information.
func (adminInstance) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.fulfilment",
		New: func() caddy.Module { return new(adminInstance) },
	}
}

// Routes returns the admin routes.
func (adminInstance) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveAdminInstance)
	return []caddy.AdminRoute{{Pattern: adminBase, Handler: h}, {Pattern: adminBase + "/", Handler: h}}
}

// instanceStatus is the answer of GET /fulfilment.
type instanceStatus struct {
	fulfilment.InstanceInfo
	Version  string   `json:"version"`
	Running  bool     `json:"running"`
	DataDir  string   `json:"data_dir,omitempty"`
	Warnings []string `json:"warnings"`
	Routes   []string `json:"routes"`
}

func serveAdminInstance(w http.ResponseWriter, r *http.Request) error {
	if p := strings.TrimSuffix(r.URL.Path, "/"); p != adminBase {
		return apiErrorf(http.StatusNotFound, "no admin route %s; the gateway's routes are %s", r.URL.Path, strings.Join(adminRoutes, ", "))
	}
	if err := requireMethod(w, r, http.MethodGet); err != nil {
		return err
	}
	out := instanceStatus{InstanceInfo: fulfilment.Instance(), Version: fulfilment.Version(),
		Warnings: fulfilment.PortWarnings(), Routes: adminRoutes}
	out.StartedAt = out.StartedAt.Truncate(time.Millisecond)
	if app, err := runningApp(); err == nil {
		out.Running, out.DataDir = true, app.Dir()
	}
	return writeAdminJSON(w, http.StatusOK, out)
}

// Interface guards
var _ caddy.AdminRouter = adminInstance{}
