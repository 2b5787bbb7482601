package wmssim

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler is the Caddy HTTP handler http.handlers.wms_simulator: a
// believable legacy warehouse management system under /wms. It is terminal:
// it answers every request itself and never calls the next handler. See
// docs/simulator.md for every path.
type Handler struct {
	// Name selects the simulated warehouse. Simulators with the same name in
	// one Caddy process share one warehouse, and it survives config reloads
	// for as long as some loaded config uses the name. Default "default".
	Name string `json:"name,omitempty"`

	// Seed adds a handful of demo items for partner-acme and partner-globex
	// when the warehouse is created (not when a reload finds it existing).
	// Default true.
	Seed *bool `json:"seed,omitempty"`

	store    *Store
	released bool // Cleanup has given store back to the pool
	logger   *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.wms_simulator",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision attaches the handler to its (possibly existing) warehouse.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Name == "" {
		h.Name = "default"
	}
	seed := h.Seed == nil || *h.Seed
	st, err := loadStore(h.Name, seed)
	if err != nil {
		return err
	}
	h.store = st
	return nil
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	if len(h.Name) > 128 {
		return errNameTooLong
	}
	return nil
}

// Cleanup releases the warehouse; the last config using it frees it. The
// handler keeps its pointer: requests of the old config that are still in
// flight during a reload go on using the same warehouse.
func (h *Handler) Cleanup() error {
	if h.store == nil || h.released {
		return nil
	}
	h.released = true
	return releaseStore(h.Name)
}

// maxControlBody bounds the JSON body of a control call.
const maxControlBody = 64 << 10

// ServeHTTP answers r. It never calls next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	w.Header().Set("Server", serverHeader)
	segs, ok := wmsPath(r.URL.Path)
	isDebugLog := ok && len(segs) == 2 && segs[0] == "_debug" && segs[1] == "requests"
	if !isDebugLog {
		h.store.logRequest(r)
	}
	if !ok {
		writeError(w, http.StatusNotFound, codeNoSuchResource, "no such path; the warehouse lives under /wms")
		return nil
	}
	if len(segs) == 0 || segs[0] != "_control" {
		if left := h.store.outageLeft(); left > 0 {
			secs := int((left + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusServiceUnavailable, codeUnavailable,
				"the warehouse system is down for maintenance")
			return nil
		}
	}
	switch {
	case len(segs) == 0:
		h.serveIndex(w, r)
	case segs[0] == "_control":
		h.serveControl(w, r, segs[1:])
	case segs[0] == "_debug":
		h.serveDebug(w, r, segs[1:])
	case segs[0] == "changes" && len(segs) == 1:
		h.serveChanges(w, r)
	case segs[0] == "classic":
		h.serveResource(w, r, segs[1:])
	default:
		h.serveResource(w, r, segs)
	}
	return nil
}

// wmsPath splits a path under /wms into its non-empty segments; ok is false
// for a path outside /wms.
func wmsPath(p string) (segs []string, ok bool) {
	rest, found := strings.CutPrefix(p, "/wms")
	if !found || (rest != "" && rest[0] != '/') {
		return nil, false
	}
	for _, s := range strings.Split(rest, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs, true
}

// serveIndex describes the system at GET /wms.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	writeValue(w, http.StatusOK, map[string]any{
		"system":    "LegacyWMS",
		"version":   "4.2",
		"resources": resourceNames,
		"feed":      "/wms/changes",
	})
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
