package versioning

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMap checks the safety invariant on arbitrary request paths, for the
// demo table and for the same table with PassUnmapped: whatever Map accepts
// lands under the version's upstream prefix followed by "/", with no dot
// segment, no empty segment (except a trailing slash), no backslash or
// control character, and Path is exactly RawPath decoded. Without
// PassUnmapped it also names a configured resource.
func FuzzMap(f *testing.F) {
	for _, s := range []string{
		"/api/fulfilment/v4/products",
		"/api/fulfilment/v4/products/42?x=1",
		"/api/fulfilment/v3/outbounds/o-1/lines/",
		"/v4/products/7",
		"/v3/products",
		"/api/fulfilment/v4/products/../../_debug",
		"/api/fulfilment/v4/products/%2e%2e/%2e%2e/x",
		"/api/fulfilment/v4/products/.%2E/x",
		"/api/fulfilment/v4/products/a%2fb",
		"/api/fulfilment/v4/products/..;/x",
		"/api/fulfilment/v4/products/%252e%252e",
		"/api/fulfilment/v4/products/%c0%ae%c0%ae",
		"/api/fulfilment/v4/products\\..\\x",
		"/api/fulfilment/v4//products",
		"/api/fulfilment/v4/products/%00",
		"/api/fulfilment/v5/products",
		"/v4/products/caf%C3%A9",
		"/v4/products/;x",
		"/api/fulfilment/v4/shipments/%3b..",
		"/api/fulfilment/v4/changes",
		"/api/fulfilment/v3/receipts/r-1",
		"/api/fulfilment/v4/_debug/requests",
	} {
		f.Add(s)
	}
	cfg := demoConfig()
	tab := mustTable(f, cfg)
	served := map[string]bool{}
	for pub := range cfg.Resources {
		served[pub] = true
	}
	for _, pub := range cfg.Expose {
		served[pub] = true
	}
	cfg.PassUnmapped = true
	pass := mustTable(f, cfg)
	f.Fuzz(func(t *testing.T, in string) {
		m, err := tab.Map(in)
		if err == nil && !served[m.Resource] {
			t.Fatalf("Map(%q) served resource %q, which is neither mapped nor exposed", in, m.Resource)
		}
		checkMapped(t, in, m, err)
		m, err = pass.Map(in)
		checkMapped(t, in, m, err)
	})
}

// checkMapped checks the safety invariant on one result of Map.
func checkMapped(t *testing.T, in string, m Mapping, err error) {
	t.Helper()
	if err != nil {
		if m != (Mapping{}) {
			t.Fatalf("Map(%q) returned a mapping with error %v", in, err)
		}
		return
	}
	prefix := m.Version.UpstreamPrefixPath() + "/"
	if !strings.HasPrefix(m.RawPath, prefix) || !strings.HasPrefix(m.Path, prefix) {
		t.Fatalf("Map(%q) = raw %q path %q, outside %q", in, m.RawPath, m.Path, prefix)
	}
	if hasDotSegment(m.Path) || hasDotSegment(m.RawPath) {
		t.Fatalf("Map(%q) = raw %q path %q has a dot segment", in, m.RawPath, m.Path)
	}
	if strings.Contains(strings.TrimSuffix(m.Path, "/"), "//") || strings.ContainsAny(m.Path, "\\\x00\r\n") {
		t.Fatalf("Map(%q) = path %q has an empty segment or a forbidden character", in, m.Path)
	}
	if dec, err := url.PathUnescape(m.RawPath); err != nil || dec != m.Path {
		t.Fatalf("Map(%q): raw %q decodes to %q (%v), path is %q", in, m.RawPath, dec, err, m.Path)
	}
	if !utf8.ValidString(m.Path) {
		t.Fatalf("Map(%q) = path %q is not UTF-8", in, m.Path)
	}
	if m.DefaultEncoded {
		if esc := (&url.URL{Path: m.Path}).EscapedPath(); esc != m.RawPath {
			t.Fatalf("Map(%q) says RawPath %q is Path's default encoding, which is %q", in, m.RawPath, esc)
		}
	}
	// What the upstream sees after its own normalisation stays inside.
	u := &url.URL{Path: m.Path, RawPath: m.RawPath}
	if !strings.HasPrefix(u.EscapedPath(), prefix) {
		t.Fatalf("Map(%q): EscapedPath %q outside %q", in, u.EscapedPath(), prefix)
	}
}

// FuzzCheckSegmentsAgreesWithCheckSegment checks checkSegments' shortcut for
// plain segments: on any path it returns exactly what running checkSegment,
// the byte-by-byte decoding check, on every segment returns.
func FuzzCheckSegmentsAgreesWithCheckSegment(f *testing.F) {
	for _, s := range []string{
		"api/fulfilment/v4/products", "a/./b", "a/../b", "a/.", "..", ".;x/b", "a;b/c",
		"a/%2e/b", "a//b", "a/b/", "", "a b/c", "caf%C3%A9/x", "...", "a/.../b", "%",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, trailingSlash bool) {
		if got, want := checkSegments(s, trailingSlash), checkEverySegment(s, trailingSlash); got != want {
			t.Fatalf("checkSegments(%q, %v) = %q; checkSegment on every segment gives %q", s, trailingSlash, got, want)
		}
	})
}

// checkEverySegment is checkSegments without its shortcut: every segment
// goes through checkSegment.
func checkEverySegment(s string, trailingSlash bool) string {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		if seg == "" {
			if i == len(segs)-1 && trailingSlash && i > 0 {
				return ""
			}
			return "the path has an empty segment"
		}
		if why := checkSegment(seg); why != "" {
			return why
		}
	}
	return ""
}
