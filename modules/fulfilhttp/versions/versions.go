// Package versions is the version handler (http.handlers.fulfilment_version):
// it maps the public paths of each served version onto the warehouse
// system's paths before reverse_proxy, and runs a wmserrors.Rewriter before
// the proxy so that the warehouse system's errors reach partners as
// problems.
package versions

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp/wmserrors"
	"github.com/fulfilgate/fulfilgate/versioning"
)

func init() {
	caddy.RegisterModule(new(VersionHandler))
}

// VersionHandler is the HTTP handler http.handlers.fulfilment_version
// (Caddyfile directive fulfilment_version; syntax in caddyfile.go).
// It maps a public path of the fulfilment resource interface onto the
// upstream warehouse system's path, as the version table configures it for
// each version, and calls the next handler,
// normally reverse_proxy:
//
//	/api/fulfilment/{version}/{resource}[/rest]  ->  {upstream_prefix}/{mapped resource}[/rest]
//	/{version}/{short label}[/rest]              ->  the same
//
// The query string passes unchanged. It rewrites the request URL's Path and
// RawPath, and sets these placeholders for the handlers after it:
//
//	{fulfilment.version}   the version name, e.g. v4
//	{fulfilment.resource}  the public resource name, e.g. products
//	{fulfilment.upstream}  the version's upstream dial address (host:port), or
//	                       the handler's default upstream; unset when neither
//	                       is configured. `reverse_proxy {fulfilment.upstream}`
//	                       then sends each version to its own upstream.
//
// It forwards a request only with the identity fulfilment_auth verified in
// the same request (a value in the request's context, never a header): it
// sets the guard's identity header to that partner id, replacing whatever is
// there, and keeps the guard's header names out of Connection, so that the
// proxy after it can neither lose nor replace the identity; and it forwards
// neither a protocol upgrade nor trailers (see fulfilhttp.DropUpgradeAndTrailers), nor
// a header that overrides the method or path (isOverrideHeader).
//
// A deprecated version's responses carry Deprecation (RFC 9745, "@<unix>"),
// Sunset (RFC 8594, HTTP-date) and Link rel="successor-version" headers.
//
// Refusals are application/problem+json (RFC 9457), and never reach the
// upstream:
//
//	400 invalid-path     dot segments (also %2e-encoded or with ";" parameters),
//	                     encoded slashes or backslashes, "//", control
//	                     characters, double encoding, malformed escapes
//	404 unknown-version  a version not served; the body's "versions" lists those served
//	404 not-found        no resource, one that is not a plain name (e.g. _debug),
//	                     or one that is neither mapped nor exposed (unless
//	                     pass_unmapped is set)
//	405 method-not-allowed  a method the version does not serve (methods;
//	                     default GET and HEAD), with Allow listing those it does
//	400 invalid-request  a GET or HEAD request with content (a Content-Length
//	                     other than 0, or a chunked body)
//	500 misconfigured    no identity from fulfilment_auth: the guard did not run
//	                     before this handler (checked first, for every request)
//
// The WMS's error answers reach the partner as problems (wmserrors.Rewriter
// runs between this handler and the proxy); a proxy that cannot reach the
// WMS goes to the server's handle_errors routes where there are any, and is
// answered as a problem otherwise.
//
// Only resources named by the configuration (resources: renamed; expose: the
// same name upstream) are served: default deny, so that nothing else under
// the upstream prefix (an internal change feed, admin paths) is reachable.
type VersionHandler struct {
	// BasePath prefixes the long public form. Default "/api/fulfilment".
	BasePath string `json:"base_path,omitempty"`

	// ShortLabels are the resources also served as /{version}/{label}.
	// Default ["products"]; an empty list serves no short form.
	ShortLabels []string `json:"short_labels,omitzero"`

	// Upstream is the default dial address (host:port) put in
	// {fulfilment.upstream} for versions without their own. Default: none.
	Upstream string `json:"upstream,omitempty"`

	// Resources maps public resource names onto upstream resource paths for
	// every version ("products": "items"); a version's own resources and
	// expose override an entry. Default: none.
	Resources map[string]string `json:"resources,omitempty"`

	// Expose lists public resource names served under the same name
	// upstream, for every version (["shipments"]: /v4/shipments ->
	// {upstream_prefix}/shipments). A name may not be in both Resources and
	// Expose. Default: none.
	Expose []string `json:"expose,omitempty"`

	// PassUnmapped serves a resource that is neither mapped nor exposed under
	// its own name upstream, instead of answering 404. SECURITY: this exposes
	// every plain-named upstream path under each version's prefix (e.g. an
	// internal change feed) to every partner; for migrations only. Default
	// false. Without it, every version must map or expose a resource.
	PassUnmapped bool `json:"pass_unmapped,omitempty"`

	// Methods are the request methods every version serves (a version's
	// own Methods override them); any other method answers 405 with Allow
	// and never reaches the upstream. Upper case, each once. Default GET
	// and HEAD: every resource operation of the interface is a GET.
	Methods []string `json:"methods,omitempty"`

	// Versions served, current first. Required.
	Versions []VersionConfig `json:"versions,omitempty"`

	table        *versioning.Table
	placeholders placeholders
	wmsErrors    wmserrors.Rewriter
	logger       *zap.Logger
}

// VersionConfig is one served version.
type VersionConfig struct {
	// Name is the version's path segment, e.g. "v4". Required.
	Name string `json:"name"`

	// UpstreamPrefix is the upstream path the version's resources live
	// under, e.g. "/wms". Default "" (the upstream's root).
	UpstreamPrefix string `json:"upstream_prefix,omitempty"`

	// Upstream is this version's upstream dial address (host:port) for
	// {fulfilment.upstream}. Default: the handler's Upstream.
	Upstream string `json:"upstream,omitempty"`

	// Resources maps public resource names onto this version's upstream
	// resource paths; overrides the handler's Resources and Expose. Default: none.
	Resources map[string]string `json:"resources,omitempty"`

	// Expose lists public resource names this version serves under the
	// same name upstream; overrides the handler's Resources and Expose.
	// Default: none.
	Expose []string `json:"expose,omitempty"`

	// Deprecated marks the version deprecated. Default: not deprecated.
	Deprecated *DeprecationConfig `json:"deprecated,omitempty"`

	// Methods are the request methods this version serves. Default: the
	// handler's Methods.
	Methods []string `json:"methods,omitempty"`
}

// DeprecationConfig describes a deprecated version.
type DeprecationConfig struct {
	// Since is the deprecation date (RFC 3339). Required.
	Since time.Time `json:"since"`
	// Sunset is when the version goes away (RFC 3339). Default: no Sunset header.
	Sunset time.Time `json:"sunset,omitzero"`
	// Successor names the served version that replaces this one. Default:
	// no Link header.
	Successor string `json:"successor,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (*VersionHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fulfilment_version",
		New: func() caddy.Module { return new(VersionHandler) },
	}
}

// Provision builds the version table. It also makes sure the fulfilment
// app is loaded, whose provisioning checks that the guard runs before this
// handler.
func (h *VersionHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	h.wmsErrors = wmserrors.New(h.logger)
	t, err := h.buildTable()
	if err != nil {
		return err
	}
	h.table = t
	h.placeholders = newPlaceholders(t)
	_, err = fulfilhttp.LoadApp(ctx)
	return err
}

// Validate checks the configuration; after Provision the table is already
// built and valid.
func (h *VersionHandler) Validate() error {
	if h.table != nil {
		return nil
	}
	_, err := h.buildTable()
	return err
}

func (h *VersionHandler) buildTable() (*versioning.Table, error) {
	cfg := versioning.Config{
		BasePath:     h.BasePath,
		ShortLabels:  h.ShortLabels,
		Resources:    h.Resources,
		Expose:       h.Expose,
		PassUnmapped: h.PassUnmapped,
		Methods:      h.Methods,
	}
	if err := checkVersionUpstream(h.Upstream); err != nil {
		return nil, fmt.Errorf("fulfilment_version: upstream: %w", err)
	}
	for _, v := range h.Versions {
		if err := checkVersionUpstream(v.Upstream); err != nil {
			return nil, fmt.Errorf("fulfilment_version: version %q: upstream: %w", v.Name, err)
		}
		up := v.Upstream
		if up == "" {
			up = h.Upstream
		}
		vv := versioning.Version{Name: v.Name, UpstreamPrefix: v.UpstreamPrefix, Upstream: up,
			Resources: v.Resources, Expose: v.Expose, Methods: v.Methods}
		if d := v.Deprecated; d != nil {
			vv.Deprecation = &versioning.Deprecation{Since: d.Since, Sunset: d.Sunset, Successor: d.Successor}
		}
		cfg.Versions = append(cfg.Versions, vv)
	}
	t, err := versioning.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("fulfilment_version: %w", err)
	}
	return t, nil
}

// checkVersionUpstream accepts "" or one host:port (no scheme, one port), the
// form reverse_proxy dials when given {fulfilment.upstream}.
func checkVersionUpstream(addr string) error {
	if addr == "" {
		return nil
	}
	if strings.Contains(addr, "://") {
		return fmt.Errorf("%q: give host:port without a scheme", addr)
	}
	na, err := caddy.ParseNetworkAddress(addr)
	if err != nil {
		return fmt.Errorf("%q: %w", addr, err)
	}
	if na.PortRangeSize() != 1 || (na.StartPort == 0 && !na.IsUnixNetwork()) {
		return fmt.Errorf("%q: must name exactly one port", addr)
	}
	return nil
}

// ServeHTTP maps the request onto the upstream path and calls next; only
// a request the guard admitted is mapped (its identity is in r's vars).
func (h *VersionHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	id, ok := fulfilhttp.VerifiedFromRequest(r)
	if !ok {
		h.refuseUnverified(w)
		return nil
	}
	// In the server's error routes the request may have been mapped
	// before, and a dial of the failed proxy attempt may still read its
	// replacer: see placeholders.
	_, inErrors := r.Context().Value(caddyhttp.ErrorCtxKey).(error)
	return h.serve(w, r, next, id, inErrors)
}

// ServeVerified is ServeHTTP for a request the guard admitted as id (the
// identity fulfilment_auth's Admit returned for r): fulfilment_gateway
// hands it over directly, without a look-up in r's vars. An id no guard
// made (the zero value) is refused as ServeHTTP refuses a request without
// one.
//
// The gateway maps a request at most once: its guard admits a request
// once (it removes the Authorization it verified), so a gateway in the
// error routes refuses a request that passed a guard before. So it does
// not look for the error routes as ServeHTTP does (a walk of the
// request's context on every request).
func (h *VersionHandler) ServeVerified(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, id fulfilhttp.VerifiedPartner) error {
	return h.serve(w, r, next, id, false)
}

// serve is ServeVerified; inErrors says whether r is in the server's
// error routes.
func (h *VersionHandler) serve(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, id fulfilhttp.VerifiedPartner, inErrors bool) error {
	if !id.Valid() {
		h.refuseUnverified(w)
		return nil
	}
	if r.URL.Opaque != "" {
		fulfilhttp.WriteProblem(w, http.StatusBadRequest, "invalid-path", "the request target must be an absolute path")
		return nil
	}
	m, err := h.table.MapURL(r.URL)
	if err != nil {
		h.refuse(w, r, err)
		return nil
	}
	v := m.Version
	fulfilhttp.Metrics().RequestBy(v.Name, id)
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		h.placeholders.give(repl, m, inErrors)
	}
	if v.Deprecated() {
		hdr := w.Header()
		hdr.Set("Deprecation", v.DeprecationHeader())
		if s := v.SunsetHeader(); s != "" {
			hdr.Set("Sunset", s)
		}
		if l := h.table.SuccessorLink(m); l != "" {
			hdr.Add("Link", l)
		}
	}
	if !v.Allows(r.Method) {
		w.Header().Set("Allow", v.AllowHeader())
		fulfilhttp.WriteProblem(w, http.StatusMethodNotAllowed, "method-not-allowed",
			"this method is not served here; the Allow header lists the methods that are")
		return nil
	}
	if r.ContentLength != 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// Content on a GET or HEAD has no meaning, and an upstream that
		// ignores it would read it as the next request on the connection.
		fulfilhttp.WriteProblem(w, http.StatusBadRequest, "invalid-request", "a GET or HEAD request must not carry content")
		return nil
	}
	if ce := h.logger.Check(zapcore.DebugLevel, "fulfilment path mapped"); ce != nil {
		ce.Write(zap.String("version", v.Name), zap.String("resource", m.Resource),
			zap.String("upstream_path", m.RawPath), fulfilhttp.RequestIDField(r))
	}
	// RawPath only where it differs from Path's default encoding, as
	// url.URL.SetPath leaves it: net/http validates and decodes a RawPath
	// again each time it writes the request.
	r.URL.Path, r.URL.RawPath = m.Path, ""
	if !m.DefaultEncoded && r.URL.EscapedPath() != m.RawPath {
		r.URL.RawPath = m.RawPath
	}
	id.Forward(r.Header)
	fulfilhttp.DropUpgradeAndTrailers(r, isOverrideHeader)
	return h.wmsErrors.ServeHTTP(w, r, next)
}

// isOverrideHeader reports whether name (canonical) is one of the headers
// that ask many server frameworks to take another method or path than the
// request line's: passed on, they would run a method the version does not
// serve, or reach a path no resource maps, past the checks above. They are
// never forwarded. (A switch: one comparison or two per header a request
// carries.)
func isOverrideHeader(name string) bool {
	switch name {
	case "X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "X-Original-Method",
		"X-Original-Url", "X-Rewrite-Url":
		return true
	}
	return false
}

// refuseUnverified answers a request that reached the handler without the
// identity fulfilment_auth attaches: the configuration runs this handler
// without the guard before it, and nothing may be forwarded.
func (h *VersionHandler) refuseUnverified(w http.ResponseWriter) {
	if ce := h.logger.Check(zapcore.ErrorLevel, "request refused: fulfilment_version ran without fulfilment_auth before it; put the guard before it in the same route"); ce != nil {
		ce.Write()
	}
	fulfilhttp.WriteProblem(w, http.StatusInternalServerError, "misconfigured",
		"the gateway is misconfigured: fulfilment_version ran without a verified identity from fulfilment_auth, so the request was not forwarded")
}

// refuse answers a path the table did not map.
func (h *VersionHandler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var uv *versioning.UnknownVersionError
	var pe *versioning.PathError
	switch {
	case errors.As(err, &uv):
		p := fulfilhttp.NewProblem(http.StatusNotFound, "unknown-version",
			"this version is not served; versions served: "+strings.Join(uv.Served, ", "))
		p.Versions = uv.Served
		fulfilhttp.WriteProblemBody(w, p)
	case errors.As(err, &pe):
		if ce := h.logger.Check(zapcore.InfoLevel, "unsafe request path refused"); ce != nil {
			ce.Write(zap.String("reason", pe.Reason), zap.String("remote_ip", fulfilhttp.ClientAddr(r)), fulfilhttp.RequestIDField(r))
		}
		fulfilhttp.WriteProblem(w, http.StatusBadRequest, "invalid-path", pe.Reason)
	default:
		fulfilhttp.WriteProblem(w, http.StatusNotFound, "not-found", err.Error())
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*VersionHandler)(nil)
	_ caddy.Validator             = (*VersionHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*VersionHandler)(nil)
)
