package versioning

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// The collection index (Table.collections) changes no answer of MapURL,
// only its speed. These tests build many tables from random
// configurations, with base paths, version names, short labels and
// upstream paths chosen to meet each other (a version named like a base
// segment or a label, bytes net/url keeps or escapes, escapes, upper
// case), and send MapURL every collection path in many spellings: as
// net/url parses a request target (with and without RawPath), as a Path
// set directly, and as a rewrite sets Path and RawPath.

// mapURLWithoutIndex is MapURL as it was before the index.
func mapURLWithoutIndex(t *Table, u *url.URL) (Mapping, error) {
	if u.RawPath == "" {
		if m, class, err := t.mapPath(u.Path); err == nil && class&notKeptByURL == 0 {
			return m, nil
		}
	}
	return t.Map(u.EscapedPath())
}

// randomConfig is a configuration drawn from small pools of names that
// meet each other; New may refuse it.
func randomConfig(rnd *rand.Rand) Config {
	pick := func(pool []string) string { return pool[rnd.IntN(len(pool))] }
	some := func(pool []string, max int) []string {
		seen := map[string]bool{}
		var out []string
		for range rnd.IntN(max + 1) {
			if s := pick(pool); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		return out
	}
	baseSegs := []string{"api", "fulfilment", "v4", "products", "API", "a;b=c", "x@y", "p:q", "d$e", "f&g",
		"h+i", "j,k", "n!o", "q(r)", "s*t", "u'v", "%41pi", "%7Eapi", "caf%C3%A9", "A-B_c", "v1.2", "~x"}
	names := []string{"v4", "v3", "api", "fulfilment", "products", "Products", "V4", "v-1", "x_9", "outbounds", "a1"}
	ups := []string{"items", "it(ems)", "a;b", "x%20y", "caf%C3%A9", "p/q", "we!rd", "items~1", "A$B", "products"}
	prefixes := []string{"", "/", "/wms", "/wms/cl!assic", "/w%20ms", "/a;b", "/W(M)S", "/api/fulfilment", "/v4"}

	cfg := Config{BasePath: "/" + strings.Join(some(baseSegs, 3), "/"), PassUnmapped: rnd.IntN(3) == 0}
	if cfg.BasePath == "/" {
		cfg.BasePath = "" // the default
	}
	switch rnd.IntN(3) {
	case 0: // nil: the default, products
	case 1:
		cfg.ShortLabels = []string{}
	default:
		cfg.ShortLabels = append([]string{}, some(names, 3)...)
	}
	resources := func() map[string]string {
		m := map[string]string{}
		for _, n := range some(names, 4) {
			m[n] = pick(ups)
		}
		return m
	}
	exposeOutside := func(m map[string]string) []string {
		var out []string
		for _, n := range some(names, 3) {
			if _, ok := m[n]; !ok {
				out = append(out, n)
			}
		}
		return out
	}
	cfg.Resources = resources()
	cfg.Expose = exposeOutside(cfg.Resources)
	for _, name := range some(names, 3) {
		v := Version{Name: name, UpstreamPrefix: pick(prefixes)}
		if rnd.IntN(2) == 0 {
			v.Resources = resources()
			v.Expose = exposeOutside(v.Resources)
		}
		cfg.Versions = append(cfg.Versions, v)
	}
	return cfg
}

// spellings are request targets that name the collection path p, or
// nearly: other case, a trailing slash, a query, escapes of its bytes
// (each byte that is not a slash, one at a time), doubled slashes.
func spellings(p string) []string {
	out := []string{p, p + "/", p + "?sku=A-1", strings.ToUpper(p), strings.ToLower(p), p + "//", p + "/x", p + "%2F"}
	for i := 1; i < len(p); i++ {
		if c := p[i]; c != '/' && c != '%' {
			out = append(out, p[:i]+fmt.Sprintf("%%%02X", c)+p[i+1:], p[:i]+fmt.Sprintf("%%%02x", c)+p[i+1:])
		}
	}
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		out = append(out, p[:i]+"/"+p[:i]+p[i:], p[:i]+"/."+p[i:], p[:i]+"/.."+p[i:])
	}
	return out
}

// urlsOf are the URLs MapURL may get for target: as net/url parses it, its
// decoded form as Path alone, target as Path, and the decoded form with
// target as RawPath (as a rewrite sets them).
func urlsOf(target string) []*url.URL {
	urls := []*url.URL{{Path: target}}
	if u, err := url.ParseRequestURI(target); err == nil {
		urls = append(urls, u, &url.URL{Path: u.Path}, &url.URL{Path: u.Path, RawPath: target})
	}
	return urls
}

// sameAnswer reports whether two answers of MapURL are the same.
func sameAnswer(m1 Mapping, err1 error, m2 Mapping, err2 error) bool {
	if (err1 == nil) != (err2 == nil) {
		return false
	}
	if err1 != nil {
		return err1.Error() == err2.Error()
	}
	return m1 == m2
}

// collectionPaths are the long and short collection paths of every
// version's mapped resources, and of a resource no configuration maps.
func collectionPaths(tab *Table) []string {
	var out []string
	for _, v := range tab.Versions() {
		for _, r := range append(v.MappedResources(), "unmapped", "products") {
			out = append(out, tab.BasePath()+"/"+v.Name+"/"+r, "/"+v.Name+"/"+r)
		}
	}
	return out
}

// For random tables, MapURL answers every spelling of every collection
// path as it did without the index, which is what Map makes of the
// escaped path; and every index entry is mapPath's own answer for its
// path, a path net/url keeps as it is.
func TestCollectionIndexChangesNoAnswer(t *testing.T) {
	rnd := rand.New(rand.NewPCG(12, 2026))
	tables, hits, misses := 0, 0, 0
	for range 200 {
		tab, err := New(randomConfig(rnd))
		if err != nil {
			continue
		}
		tables++
		for p, m := range tab.collections {
			want, class, err := tab.mapPath(p)
			if err != nil || want != m || class&notKeptByURL != 0 {
				t.Fatalf("base %q: the index holds %q -> %+v; mapPath gives %+v (class %#x), %v", tab.base, p, m, want, class, err)
			}
		}
		for _, p := range collectionPaths(tab) {
			for _, target := range spellings(p) {
				for _, u := range urlsOf(target) {
					got, gotErr := tab.MapURL(u)
					old, oldErr := mapURLWithoutIndex(tab, u)
					want, wantErr := tab.Map(u.EscapedPath())
					if !sameAnswer(got, gotErr, old, oldErr) || !sameAnswer(got, gotErr, want, wantErr) {
						t.Fatalf("base %q, URL path %q raw %q: MapURL = %+v, %v; without the index %+v, %v; Map(EscapedPath) = %+v, %v",
							tab.base, u.Path, u.RawPath, got, gotErr, old, oldErr, want, wantErr)
					}
					if _, ok := tab.collections[u.Path]; ok && u.RawPath == "" {
						hits++
					} else {
						misses++
					}
				}
			}
		}
	}
	// The pools must give many tables, and requests both answered from
	// the index and not.
	if tables < 100 || hits < 10000 || misses < 10000 {
		t.Fatalf("%d tables, %d index hits, %d others: the random configurations no longer test much", tables, hits, misses)
	}
	t.Logf("%d tables, %d index hits, %d others", tables, hits, misses)
}
