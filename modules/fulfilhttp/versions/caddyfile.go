package versions

import (
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/fulfilgate/fulfilgate/internal/caddyfileargs"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("fulfilment_version", parseVersionDirective)
}

func parseVersionDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	v := new(VersionHandler)
	if err := v.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return v, nil
}

// UnmarshalCaddyfile parses the fulfilment_version directive:
//
//	fulfilment_version [<matcher>] {
//	    base_path    <path>                # default /api/fulfilment
//	    short_labels [<label>...]          # default products; no labels: no short form
//	    upstream     <host:port>           # default {fulfilment.upstream}; default none
//	    map          <public> <upstream>   # for every version; repeatable
//	    expose       <public>...           # same name upstream, every version; repeatable
//	    pass_unmapped                      # UNSAFE: pass unmapped names through; default off
//	    methods      <method>...           # methods every version serves; default GET HEAD
//
//	    version <name> {                   # repeatable; at least one; current first
//	        upstream_prefix <path>         # default "" (upstream root)
//	        upstream        <host:port>    # default: the handler's upstream
//	        map             <public> <upstream>    # overrides the shared map/expose; repeatable
//	        expose          <public>...    # overrides the shared map/expose; repeatable
//	        deprecated <date> [sunset <date>] [successor <version>]
//	        methods         <method>...    # overrides the shared methods
//	    }
//	}
//
// Only mapped or exposed resources are served; any other resource name
// answers 404, and a version that serves no resource is refused at load.
// pass_unmapped restores pass-through of unmapped plain names onto the same
// name upstream: it exposes EVERY plain-named path under the version's
// upstream prefix (for example the WMS's internal /wms/changes) to every
// partner, and is meant for migrations only. A name may be mapped or
// exposed once per level (shared, or one version).
//
// Any method a version does not serve answers 405 problem+json with an
// Allow header and never reaches the upstream. Methods are case-sensitive
// and written in upper case (GET, HEAD, POST, PUT, PATCH, DELETE, ...);
// the default, GET and HEAD, serves every resource operation of the
// interface. A WMS that takes writes through the gateway needs them named,
// e.g. methods GET HEAD POST.
//
// Dates are RFC 3339 (2026-06-01T00:00:00Z) or plain dates (2026-06-01,
// midnight UTC). A map's upstream side is one or more path segments without
// a leading slash (items, catalogue/items). Example, the demo's:
//
//	fulfilment_version {
//	    map products    items
//	    map outbounds   outbound-orders
//	    map inbounds    inbound-orders
//	    map adjustments stock-adjustments
//	    expose shipments receipts labels
//	    version v4 {
//	        upstream_prefix /wms
//	    }
//	    version v3 {
//	        upstream_prefix /wms/classic
//	        deprecated 2026-06-01 sunset 2027-06-30 successor v4
//	    }
//	}
func (h *VersionHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "base_path":
			if err := caddyfileargs.String(d, &h.BasePath); err != nil {
				return err
			}
		case "short_labels":
			if err := caddyfileargs.Once(d, h.ShortLabels != nil); err != nil {
				return err
			}
			h.ShortLabels = append([]string{}, d.RemainingArgs()...)
		case "upstream":
			if err := caddyfileargs.String(d, &h.Upstream); err != nil {
				return err
			}
		case "map":
			if err := versionParseMap(d, &h.Resources, h.Expose); err != nil {
				return err
			}
		case "expose":
			if err := versionParseExpose(d, &h.Expose, h.Resources); err != nil {
				return err
			}
		case "methods":
			if err := versionParseMethods(d, &h.Methods); err != nil {
				return err
			}
		case "pass_unmapped":
			if err := caddyfileargs.Flag(d, &h.PassUnmapped); err != nil {
				return err
			}
		case "version":
			v, err := parseVersionBlock(d)
			if err != nil {
				return err
			}
			for _, o := range h.Versions {
				if o.Name == v.Name {
					return d.Errf("version %q given twice", v.Name)
				}
			}
			h.Versions = append(h.Versions, v)
		default:
			return d.Errf("unknown fulfilment_version option %q", d.Val())
		}
	}
	if len(h.Versions) == 0 {
		return d.Err("fulfilment_version needs at least one version block")
	}
	return nil
}

// parseVersionBlock parses "version <name> { ... }"; d is on "version".
func parseVersionBlock(d *caddyfile.Dispenser) (VersionConfig, error) {
	var v VersionConfig
	if !d.NextArg() {
		return v, d.Err("version needs a name")
	}
	v.Name = d.Val()
	if d.NextArg() {
		return v, d.ArgErr()
	}
	for nest := d.Nesting(); d.NextBlock(nest); {
		switch d.Val() {
		case "upstream_prefix":
			if err := caddyfileargs.String(d, &v.UpstreamPrefix); err != nil {
				return v, err
			}
		case "upstream":
			if err := caddyfileargs.String(d, &v.Upstream); err != nil {
				return v, err
			}
		case "map":
			if err := versionParseMap(d, &v.Resources, v.Expose); err != nil {
				return v, err
			}
		case "expose":
			if err := versionParseExpose(d, &v.Expose, v.Resources); err != nil {
				return v, err
			}
		case "methods":
			if err := versionParseMethods(d, &v.Methods); err != nil {
				return v, err
			}
		case "deprecated":
			if err := caddyfileargs.Once(d, v.Deprecated != nil); err != nil {
				return v, err
			}
			dep, err := parseVersionDeprecated(d)
			if err != nil {
				return v, err
			}
			v.Deprecated = dep
		default:
			return v, d.Errf("unknown option %q in version %s", d.Val(), v.Name)
		}
	}
	return v, nil
}

// parseVersionDeprecated parses "deprecated <date> [sunset <date>] [successor <v>]".
func parseVersionDeprecated(d *caddyfile.Dispenser) (*DeprecationConfig, error) {
	dep := new(DeprecationConfig)
	if !d.NextArg() {
		return nil, d.Err("deprecated needs a date")
	}
	var err error
	if dep.Since, err = versionParseDate(d.Val()); err != nil {
		return nil, d.Errf("deprecated: %v", err)
	}
	for d.NextArg() {
		switch kw := d.Val(); kw {
		case "sunset", "successor":
			if !d.NextArg() {
				return nil, d.Errf("%s needs a value", kw)
			}
			if kw == "sunset" {
				if !dep.Sunset.IsZero() {
					return nil, d.Err("sunset given twice")
				}
				if dep.Sunset, err = versionParseDate(d.Val()); err != nil {
					return nil, d.Errf("sunset: %v", err)
				}
			} else {
				if dep.Successor != "" {
					return nil, d.Err("successor given twice")
				}
				dep.Successor = d.Val()
			}
		default:
			return nil, d.Errf("deprecated: unexpected %q (want sunset <date> or successor <version>)", kw)
		}
	}
	return dep, nil
}

// versionParseDate accepts RFC 3339 or a plain date (midnight UTC).
func versionParseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, &versionDateError{s}
}

type versionDateError struct{ s string }

func (e *versionDateError) Error() string {
	return "date " + `"` + e.s + `"` + " is neither RFC 3339 (2026-06-01T00:00:00Z) nor a plain date (2026-06-01)"
}

// versionParseMap parses "map <public> <upstream>" into *m; exposed are
// the names the same block exposes.
func versionParseMap(d *caddyfile.Dispenser, m *map[string]string, exposed []string) error {
	args := d.RemainingArgs()
	if len(args) != 2 {
		return d.Err("map needs two arguments: <public resource> <upstream path>")
	}
	if slices.Contains(exposed, args[0]) {
		return d.Errf("%q is both exposed and mapped; give it once", args[0])
	}
	if *m == nil {
		*m = map[string]string{}
	}
	if _, dup := (*m)[args[0]]; dup {
		return d.Errf("map for %q given twice", args[0])
	}
	(*m)[args[0]] = args[1]
	return nil
}

// versionParseExpose parses "expose <public>..." and appends to *names;
// mapped is the same block's map.
func versionParseExpose(d *caddyfile.Dispenser, names *[]string, mapped map[string]string) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.Err("expose needs at least one resource name")
	}
	for _, a := range args {
		if slices.Contains(*names, a) {
			return d.Errf("expose: %q given twice", a)
		}
		if _, ok := mapped[a]; ok {
			return d.Errf("%q is both exposed and mapped; give it once", a)
		}
		*names = append(*names, a)
	}
	return nil
}

// versionParseMethods parses "methods <method>..." into *methods,
// refusing a repeat of the subdirective.
func versionParseMethods(d *caddyfile.Dispenser, methods *[]string) error {
	if err := caddyfileargs.Once(d, *methods != nil); err != nil {
		return err
	}
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.Err("methods needs at least one method, e.g. methods GET HEAD")
	}
	*methods = args
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*VersionHandler)(nil)
