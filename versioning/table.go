// Package versioning holds the version table of the fulfilment resource
// interface and maps public request paths onto the upstream warehouse
// system's paths: each version maps onto its upstream's path prefix, with
// its own mapping for a resource whose upstream path differs. It knows
// nothing of Caddy.
//
// Public forms served:
//
//	{base}/{version}/{resource}[/rest...]   base defaults to /api/fulfilment
//	/{version}/{label}[/rest...]            label is one of the short labels (default: products)
//
// Both forms of a resource map onto the same upstream path:
//
//	{upstream prefix}/{upstream resource}[/rest...]
//
// where the upstream resource is the version's own mapping for the public
// resource name, else the shared one. Only mapped resources are served (a
// Resources entry, or an Expose entry: the same name upstream); any other
// resource name is NotFoundError, so that no WMS path under the prefix is
// reachable unless the configuration names it. Config.PassUnmapped turns
// that off (migrations only). Query strings are not part of the path and
// pass unchanged.
//
// Each version serves a set of request methods (Version.Allows), by default
// DefaultMethods; the HTTP glue answers any other method with 405 and the
// version's Allow header.
package versioning

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultBasePath is the base of the long public form.
const DefaultBasePath = "/api/fulfilment"

// DefaultShortLabels are the short-form resources ("/v4/products").
var DefaultShortLabels = []string{"products"}

// DefaultMethods are the request methods a version serves unless configured
// otherwise: every resource operation of the interface is a GET (its POSTs,
// to the token endpoint and to subscriptions, are not resources of a
// version), and HEAD goes with GET.
var DefaultMethods = []string{http.MethodGet, http.MethodHead}

// Config is the version table's configuration.
type Config struct {
	// BasePath prefixes the long public form. Default DefaultBasePath.
	BasePath string
	// ShortLabels are the resources also served as "/{version}/{label}".
	// Nil means DefaultShortLabels; an empty non-nil slice means none.
	ShortLabels []string
	// Resources maps public resource names onto upstream resource paths for
	// every version; a version's own Resources and Expose override entries
	// here. Default: none.
	Resources map[string]string
	// Expose lists public resource names served under the same name
	// upstream, for every version ("shipments" -> "shipments"): identity
	// mappings without repeating the name. A name may not be both in
	// Resources and in Expose. Default: none.
	Expose []string
	// PassUnmapped, when true, maps a resource without a mapping onto the
	// same name upstream instead of refusing it with NotFoundError. This
	// exposes EVERY plain-named upstream path under each version's prefix
	// (internal feeds, admin endpoints, ...) to whoever may call the
	// interface; meant for migrations only. Default false: only mapped or
	// exposed resources are served.
	PassUnmapped bool
	// Methods are the request methods every version serves; a version's
	// own Methods override them. Nil means DefaultMethods. Upper-case
	// tokens (methods are case-sensitive), each once, at least one.
	Methods []string
	// Versions served, current first. At least one.
	Versions []Version
}

// Version is one served version.
type Version struct {
	// Name is the path segment, e.g. "v4". A plain name.
	Name string
	// UpstreamPrefix is the escaped upstream path the version's resources
	// live under, e.g. "/wms". "" or "/" means the upstream's root.
	UpstreamPrefix string
	// Upstream is the version's upstream dial address (host:port), if it has
	// its own; empty otherwise. The table only carries it.
	Upstream string
	// Resources maps public resource names onto upstream resource paths
	// (one or more segments, escaped, without a leading slash), for
	// resources whose upstream path differs: "products" -> "items".
	// Entries override the shared Resources and Expose. Default: none.
	Resources map[string]string
	// Expose lists public resource names this version serves under the same
	// name upstream; entries override the shared Resources and Expose. A
	// name may not be both in Resources and in Expose. Default: none.
	Expose []string
	// Deprecation, when set, marks the version deprecated.
	Deprecation *Deprecation
	// Methods are the request methods this version serves; nil means the
	// shared Config.Methods.
	Methods []string

	// computed by New
	allow             string // Methods joined for an Allow header
	deprecationHeader string
	sunsetHeader      string
	successor         *Version
	upstreamPaths     map[string]resource // by public resource name
	prefix            string              // normalised UpstreamPrefix
	prefixKept        bool                // net/url's path encoding keeps prefix as it is
}

// resource is a mapped resource of a version.
type resource struct {
	path string // the version's upstream prefix + "/" + the upstream resource
	kept bool   // net/url's path encoding keeps path as it is
}

// newResource is a resource whose upstream path is path.
func newResource(path string) resource {
	return resource{path, keptByURLPath(path)}
}

// keptByURLPath reports whether net/url's path encoding keeps every byte
// of p as it is.
func keptByURLPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if pathByteClass[p[i]]&notKeptByURL != 0 {
			return false
		}
	}
	return true
}

// Deprecation describes a deprecated version.
type Deprecation struct {
	// Since is when the version is (or was) deprecated: the RFC 9745
	// Deprecation header "@<unix seconds>".
	Since time.Time
	// Sunset, if not zero, is when the version stops being served: the
	// RFC 8594 Sunset header, an HTTP-date.
	Sunset time.Time
	// Successor, if not empty, names the served version that replaces this
	// one: a Link header rel="successor-version" to the same resource there.
	Successor string
}

// Table is a validated, immutable version table, safe for concurrent use.
type Table struct {
	base         string // with leading slash, without trailing slash
	short        map[string]bool
	passUnmapped bool
	versions     []*Version
	names        []string
	// collections maps the public path of every collection (a served
	// resource without a remainder, in the long form and, for a short
	// label, the short form) onto its mapping, made by mapPath at New:
	// MapURL answers the commonest request, a collection read with or
	// without a query, with one look-up instead of a scan.
	collections map[string]Mapping
}

// New validates cfg and builds the table.
func New(cfg Config) (*Table, error) {
	t := &Table{base: cfg.BasePath, passUnmapped: cfg.PassUnmapped, short: map[string]bool{}}
	if t.base == "" {
		t.base = DefaultBasePath
	}
	if t.base == "/" || checkPath(t.base) != "" || t.base[len(t.base)-1] == '/' {
		return nil, fmt.Errorf("base path %q: must be a safe absolute path without a trailing slash", cfg.BasePath)
	}
	labels := cfg.ShortLabels
	if labels == nil {
		labels = DefaultShortLabels
	}
	for _, l := range labels {
		if !isName(l) {
			return nil, fmt.Errorf("short label %q: must be a plain name (letters, digits, '-', '_')", l)
		}
		t.short[l] = true
	}
	if len(cfg.Versions) == 0 {
		return nil, errors.New("no versions configured")
	}
	if err := checkResources("", cfg.Resources, cfg.Expose); err != nil {
		return nil, err
	}
	shared := cfg.Methods
	if shared == nil {
		shared = DefaultMethods
	}
	if err := checkMethods("", shared); err != nil {
		return nil, err
	}
	byName := map[string]*Version{}
	for i := range cfg.Versions {
		v := cfg.Versions[i] // copy: the table owns its versions
		if v.Methods == nil {
			v.Methods = shared
		}
		if err := t.addVersion(&v, cfg.Resources, cfg.Expose); err != nil {
			return nil, err
		}
		if byName[v.Name] != nil {
			return nil, fmt.Errorf("version %q configured twice", v.Name)
		}
		vp := &v
		byName[v.Name] = vp
		t.versions = append(t.versions, vp)
		t.names = append(t.names, v.Name)
	}
	for _, v := range t.versions {
		if d := v.Deprecation; d != nil && d.Successor != "" {
			if d.Successor == v.Name {
				return nil, fmt.Errorf("version %q: successor is the version itself", v.Name)
			}
			if v.successor = byName[d.Successor]; v.successor == nil {
				return nil, fmt.Errorf("version %q: successor %q is not a served version", v.Name, d.Successor)
			}
		}
	}
	t.indexCollections()
	return t, nil
}

// indexCollections fills t.collections. Each entry is what mapPath makes
// of its path, kept only where MapURL would return that same mapping for
// a URL whose Path is the path and whose RawPath is empty (every byte of
// the path kept by net/url's path encoding), so the index changes no
// answer of MapURL, only how fast it comes.
func (t *Table) indexCollections() {
	t.collections = map[string]Mapping{}
	for _, v := range t.versions {
		for name := range v.upstreamPaths {
			paths := []string{t.base + "/" + v.Name + "/" + name}
			if t.short[name] {
				paths = append(paths, "/"+v.Name+"/"+name)
			}
			for _, p := range paths {
				if m, class, err := t.mapPath(p); err == nil && class&notKeptByURL == 0 {
					t.collections[p] = m
				}
			}
		}
	}
}

func (t *Table) addVersion(v *Version, shared map[string]string, sharedExpose []string) error {
	if !isName(v.Name) {
		return fmt.Errorf("version name %q: must be a plain name (letters, digits, '-', '_')", v.Name)
	}
	v.prefix = v.UpstreamPrefix
	if v.prefix == "/" {
		v.prefix = ""
	}
	if v.prefix != "" && (checkPath(v.prefix) != "" || v.prefix[len(v.prefix)-1] == '/') {
		return fmt.Errorf("version %q: upstream prefix %q must be a safe absolute path without a trailing slash", v.Name, v.UpstreamPrefix)
	}
	if err := checkResources(v.Name, v.Resources, v.Expose); err != nil {
		return err
	}
	if err := checkMethods(v.Name, v.Methods); err != nil {
		return err
	}
	v.Methods = append([]string(nil), v.Methods...) // the table owns its versions
	v.allow = strings.Join(v.Methods, ", ")
	v.Expose = append([]string(nil), v.Expose...)
	v.prefixKept = keptByURLPath(v.prefix)
	v.upstreamPaths = make(map[string]resource, len(shared)+len(sharedExpose)+len(v.Resources)+len(v.Expose))
	for pub, up := range shared {
		v.upstreamPaths[pub] = newResource(v.prefix + "/" + up)
	}
	for _, pub := range sharedExpose {
		v.upstreamPaths[pub] = newResource(v.prefix + "/" + pub)
	}
	for pub, up := range v.Resources {
		v.upstreamPaths[pub] = newResource(v.prefix + "/" + up)
	}
	for _, pub := range v.Expose {
		v.upstreamPaths[pub] = newResource(v.prefix + "/" + pub)
	}
	if len(v.upstreamPaths) == 0 && !t.passUnmapped {
		return fmt.Errorf("version %q serves no resource: map or expose at least one resource "+
			"(shared or in the version); unmapped resources are refused", v.Name)
	}
	if d := v.Deprecation; d != nil {
		if d.Since.IsZero() {
			return fmt.Errorf("version %q: deprecated without a date", v.Name)
		}
		if !d.Sunset.IsZero() && d.Sunset.Before(d.Since) {
			return fmt.Errorf("version %q: sunset %s is before the deprecation date %s", v.Name,
				d.Sunset.Format(time.RFC3339), d.Since.Format(time.RFC3339))
		}
		v.deprecationHeader = "@" + strconv.FormatInt(d.Since.Unix(), 10)
		if !d.Sunset.IsZero() {
			v.sunsetHeader = d.Sunset.UTC().Format(http.TimeFormat)
		}
	}
	return nil
}

// checkResources checks one level's (shared or a version's) resource map
// and exposed names.
func checkResources(version string, m map[string]string, expose []string) error {
	where, whereExp := "resource map", "expose"
	if version != "" {
		where = fmt.Sprintf("version %q: resource map", version)
		whereExp = fmt.Sprintf("version %q: expose", version)
	}
	for pub, up := range m {
		if !isName(pub) {
			return fmt.Errorf("%s: public name %q must be a plain name (letters, digits, '-', '_')", where, pub)
		}
		if up == "" || up[len(up)-1] == '/' || checkSegments(up, false) != "" {
			return fmt.Errorf("%s: upstream path %q for %q must be safe path segments without leading or trailing slash", where, up, pub)
		}
	}
	seen := make(map[string]bool, len(expose))
	for _, pub := range expose {
		if !isName(pub) {
			return fmt.Errorf("%s: name %q must be a plain name (letters, digits, '-', '_')", whereExp, pub)
		}
		if seen[pub] {
			return fmt.Errorf("%s: %q given twice", whereExp, pub)
		}
		seen[pub] = true
		if up, ok := m[pub]; ok {
			return fmt.Errorf("%s: %q is also mapped (onto %q); give it once", whereExp, pub, up)
		}
	}
	return nil
}

// checkMethods checks one level's (shared or a version's) methods.
func checkMethods(version string, methods []string) error {
	where := "methods"
	if version != "" {
		where = fmt.Sprintf("version %q: methods", version)
	}
	if len(methods) == 0 {
		return fmt.Errorf("%s: at least one method", where)
	}
	for i, m := range methods {
		if !isMethod(m) {
			return fmt.Errorf("%s: %q is not a method name: methods are case-sensitive tokens, the standard ones upper case (GET, POST)", where, m)
		}
		if m == "CONNECT" {
			// A proxied CONNECT (or an HTTP/2 websocket CONNECT, which the
			// proxy turns into an upgrade) becomes a tunnel to the upstream
			// that carries any request with any identity.
			return fmt.Errorf("%s: %q cannot be served: it opens a tunnel to the upstream, past the identity the gateway sets", where, m)
		}
		for _, o := range methods[:i] {
			if o == m {
				return fmt.Errorf("%s: %q given twice", where, m)
			}
		}
	}
	return nil
}

// isMethod reports whether m is an upper-case RFC 9110 token.
func isMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch {
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Names lists the versions served, in configuration order. The caller must
// not modify it.
func (t *Table) Names() []string { return t.names }

// Versions lists the versions served, in configuration order: the same
// values as Mapping.Version.
func (t *Table) Versions() []*Version { return slices.Clone(t.versions) }

// BasePath is the base of the long public form.
func (t *Table) BasePath() string { return t.base }

// Mapping is where a public path goes upstream.
type Mapping struct {
	// Version is the version the path named.
	Version *Version
	// Resource is the public resource name.
	Resource string
	// Rest is the escaped remainder after the resource ("" or "/...").
	Rest string
	// Short reports whether the request used the short form.
	Short bool
	// RawPath is the escaped upstream path; Path is the same path decoded.
	// Set both on the request's URL (Path, RawPath).
	Path, RawPath string
	// DefaultEncoded reports that RawPath is what net/url's path encoding
	// makes of Path (URL.EscapedPath of a URL without RawPath), so that a
	// URL needs no RawPath. When false, it may still be.
	DefaultEncoded bool

	upstreamKept bool // the upstream part of RawPath that is configuration is kept
}

// MapURL maps u's path: the same as Map(u.EscapedPath()), without working
// out the escaped form when u's path is its own (u has no RawPath, and
// net/url's path encoding keeps every byte of its Path), which is the
// common case, and with one look-up when that path is a collection's
// (see Table.collections).
func (t *Table) MapURL(u *url.URL) (Mapping, error) {
	if u.RawPath == "" {
		if m, ok := t.collections[u.Path]; ok {
			return m, nil
		}
		if m, class, err := t.mapPath(u.Path); err == nil && class&notKeptByURL == 0 {
			return m, nil
		}
	}
	return t.Map(u.EscapedPath())
}

// Map maps an escaped request path (URL.EscapedPath) onto the upstream. It
// returns *PathError for an unsafe path, *UnknownVersionError for a version
// not served and *NotFoundError for a path that names no served resource.
// On success Mapping.RawPath starts with the version's upstream prefix
// followed by "/", and neither it nor Mapping.Path has a dot segment.
//
// Map allocates only for errors and when the result path needs building:
// at most two allocations (one when the path has no percent-escapes, none
// when it names a resource without a remainder).
func (t *Table) Map(escaped string) (Mapping, error) {
	m, _, err := t.mapPath(escaped)
	return m, err
}

// mapPath is Map, and the bits of pathByteClass the bytes of escaped hold
// together when it is accepted.
func (t *Table) mapPath(escaped string) (Mapping, byte, error) {
	why, class := scanPath(escaped)
	if why != "" {
		return Mapping{}, 0, &PathError{Reason: why}
	}
	m, err := t.mapChecked(escaped)
	if err == nil {
		m.DefaultEncoded = class&notKeptByURL == 0 && m.upstreamKept
	}
	return m, class, err
}

// mapChecked is Map for a path scanPath accepted.
func (t *Table) mapChecked(escaped string) (Mapping, error) {
	var m Mapping
	var ver string
	if rest, ok := strings.CutPrefix(escaped, t.base); ok && (rest == "" || rest[0] == '/') {
		if rest == "" || rest == "/" {
			return Mapping{}, &NotFoundError{Reason: "no version in the path"}
		}
		ver, rest = cutSegment(rest[1:])
		if rest == "" || rest == "/" {
			if t.version(ver) == nil {
				return Mapping{}, t.unknown(ver)
			}
			return Mapping{}, &NotFoundError{Reason: "no resource in the path"}
		}
		m.Resource, m.Rest = cutSegment(rest[1:])
	} else {
		ver, rest = cutSegment(escaped[1:])
		if rest == "" {
			return Mapping{}, &NotFoundError{Reason: "not a fulfilment resource path"}
		}
		m.Resource, m.Rest = cutSegment(rest[1:])
		if !t.short[m.Resource] {
			return Mapping{}, &NotFoundError{Reason: "not a fulfilment resource path"}
		}
		m.Short = true
	}
	v := t.version(ver)
	if v == nil {
		return Mapping{}, t.unknown(ver)
	}
	m.Version = v
	if !isName(m.Resource) {
		return Mapping{}, &NotFoundError{Reason: "no such resource"}
	}
	res, ok := v.upstreamPaths[m.Resource]
	if !ok {
		if !t.passUnmapped {
			return Mapping{}, &NotFoundError{Reason: "no such resource"}
		}
		m.RawPath = v.prefix + "/" + m.Resource + m.Rest
		m.upstreamKept = v.prefixKept // a resource name is a plain name
	} else {
		m.RawPath, m.upstreamKept = res.path, res.kept
		if m.Rest != "" {
			m.RawPath = res.path + m.Rest
		}
	}
	m.Path = m.RawPath
	if hasEscape(m.RawPath) {
		p := unescape(m.RawPath)
		if !utf8.ValidString(p) {
			return Mapping{}, &PathError{Reason: "the path does not decode to valid UTF-8"}
		}
		m.Path = p
	}
	return m, nil
}

func (t *Table) version(name string) *Version {
	for _, v := range t.versions {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func (t *Table) unknown(ver string) error {
	return &UnknownVersionError{Version: ver, Served: t.names}
}

// cutPrefix is strings.CutPrefix (kept local to document the hot path).
// cutSegment splits s at its first "/": the segment and the rest, which is
// "" or starts with "/".
func cutSegment(s string) (seg, rest string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// unescape decodes the percent-escapes of s, which checkPath has accepted
// (every '%' starts a valid escape), with one allocation.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			return true
		}
	}
	return false
}

// Deprecated reports whether the version is deprecated.
func (v *Version) Deprecated() bool { return v.Deprecation != nil }

// DeprecationHeader is the RFC 9745 Deprecation header value ("@<unix>"),
// or "" when the version is not deprecated.
func (v *Version) DeprecationHeader() string { return v.deprecationHeader }

// SunsetHeader is the RFC 8594 Sunset header value (an HTTP-date), or "".
func (v *Version) SunsetHeader() string { return v.sunsetHeader }

// Allows reports whether the version serves requests of method.
func (v *Version) Allows(method string) bool {
	for _, m := range v.Methods {
		if m == method {
			return true
		}
	}
	return false
}

// AllowHeader is the Allow header value for a method the version does not
// serve: its methods, comma-separated ("GET, HEAD").
func (v *Version) AllowHeader() string { return v.allow }

// MappedResources are the public names of the resources the version maps
// or exposes, sorted (PassUnmapped serves others besides).
func (v *Version) MappedResources() []string {
	return slices.Sorted(maps.Keys(v.upstreamPaths))
}

// UpstreamPrefixPath is the normalised upstream prefix ("" for the root).
func (v *Version) UpstreamPrefixPath() string { return v.prefix }

// SuccessorLink is the Link header value pointing at the same resource in
// the successor version, in the form the request used, for example
// `</api/fulfilment/v4/products/42>; rel="successor-version"`; "" when the
// version has no successor.
func (t *Table) SuccessorLink(m Mapping) string {
	s := m.Version.successor
	if s == nil {
		return ""
	}
	base := t.base
	if m.Short {
		base = ""
	}
	return "<" + base + "/" + s.Name + "/" + m.Resource + m.Rest + `>; rel="successor-version"`
}
