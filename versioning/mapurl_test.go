package versioning

import (
	"net/url"
	"testing"
)

// The notKeptByURL bit of every byte agrees with net/url's path encoding.
func TestNotKeptByURLIsNetURLs(t *testing.T) {
	for c := range 256 {
		p := "/a" + string([]byte{byte(c)}) + "b"
		kept := (&url.URL{Path: p}).EscapedPath() == p
		if got := pathByteClass[c]&notKeptByURL == 0; got != kept {
			t.Errorf("byte %#x: the table says kept=%v, net/url %v", c, got, kept)
		}
	}
}

// mapURLSeeds are request targets for MapURL: plain, with escapes that
// net/url keeps in RawPath, with bytes it escapes, and unsafe ones.
var mapURLSeeds = []string{
	"/api/fulfilment/v4/products", "/v4/products/A-1", "/api/fulfilment/v4/products/a%20b",
	"/api/fulfilment/v4/products/a%2Fb", "/api/fulfilment/v4/products/%41", "/v4/products/a;b=c",
	"/api/fulfilment/v4/products/a!b", "/api/fulfilment/v4/products/a(b)", "/v4/products/a'b*",
	"*", "/api/fulfilment/v4/products/caf%C3%A9", "/api/fulfilment/v4/products/a%25b",
	"/api/fulfilment/v4/products/a+b@c:d", "/api/fulfilment/v4/products/a%3Fb",
	"/api/fulfilment/v4/products/..", "/api/fulfilment/v4/products/%2e%2e", "/api/fulfilment/v9/x",
	"/api/fulfilment/v3/outbounds/o-1/", "/v4/products/a%21b", "/v3/products/x", "/api/fulfilment/v3/unmapped/y",
	"/v3/products", "/api/fulfilment/v3/outbounds", "/api/fulfilment/v4/shipments", "/api/fulfilment/v4/products/",
	"/v4/shipments", "/api/fulfilment/v4/Products", "/api/fulfilment/v3/unmapped",
}

// MapURL gives what Map of the escaped path gives, for URLs as net/url
// parses request targets (with and without RawPath) and for URLs whose
// Path is set directly (bytes net/url would escape, such as a space).
func TestMapURLAgreesWithMap(t *testing.T) {
	for _, tab := range []*Table{mustTable(t, demoConfig()), passUnmappedTable(t), oddUpstreamTable(t)} {
		for _, target := range mapURLSeeds {
			checkMapURL(t, tab, target)
		}
	}
}

func FuzzMapURLAgreesWithMap(f *testing.F) {
	for _, s := range mapURLSeeds {
		f.Add(s)
	}
	tables := []*Table{mustTable(f, demoConfig()), passUnmappedTable(f), oddUpstreamTable(f)}
	f.Fuzz(func(t *testing.T, target string) {
		for _, tab := range tables {
			checkMapURL(t, tab, target)
		}
	})
}

// Every collection path of a served resource, in the long form and (for a
// short label) the short form, is in the table's index, with the mapping
// Map makes of it; nothing else is.
func TestCollectionPathsAreIndexed(t *testing.T) {
	tab := mustTable(t, demoConfig())
	want := map[string]bool{}
	for _, v := range tab.Versions() {
		for _, name := range v.MappedResources() {
			want[tab.BasePath()+"/"+v.Name+"/"+name] = true
		}
		want["/"+v.Name+"/products"] = true
	}
	for p := range want {
		got, ok := tab.collections[p]
		if !ok {
			t.Errorf("%s: not in the index", p)
			continue
		}
		if m, err := tab.Map(p); err != nil || m != got {
			t.Errorf("%s: the index holds %+v; Map gives %+v, %v", p, got, m, err)
		}
	}
	for p := range tab.collections {
		if !want[p] {
			t.Errorf("%s: in the index, but not a collection path", p)
		}
	}
}

// The index only holds paths MapURL may answer from it: a collection of
// a table whose upstream path net/url would escape is mapped by the
// general path, and still agrees with Map.
func TestCollectionIndexKeepsOddUpstreams(t *testing.T) {
	tab := oddUpstreamTable(t)
	for _, p := range []string{"/api/fulfilment/v4/products", "/api/fulfilment/v3/outbounds", "/v3/products"} {
		checkMapURL(t, tab, p)
	}
}

// oddUpstreamTable has an upstream prefix and a resource path with bytes
// net/url's path encoding escapes: a mapping onto them is never
// DefaultEncoded.
func oddUpstreamTable(t testing.TB) *Table {
	cfg := demoConfig()
	cfg.Resources["products"] = "it(ems)"
	cfg.Versions[1].UpstreamPrefix = "/wms/cl!assic"
	cfg.PassUnmapped = true
	return mustTable(t, cfg)
}

func passUnmappedTable(t testing.TB) *Table {
	cfg := demoConfig()
	cfg.PassUnmapped = true
	return mustTable(t, cfg)
}

// checkMapURL compares MapURL with Map for target parsed as a request
// target, and for a URL with target as its Path.
func checkMapURL(t *testing.T, tab *Table, target string) {
	t.Helper()
	urls := []*url.URL{{Path: target}}
	if u, err := url.ParseRequestURI(target); err == nil {
		urls = append(urls, u)
	}
	for _, u := range urls {
		got, gotErr := tab.MapURL(u)
		want, wantErr := tab.Map(u.EscapedPath())
		if got != want || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("URL path %q raw %q: MapURL = %+v, %v; Map(EscapedPath) = %+v, %v", u.Path, u.RawPath, got, gotErr, want, wantErr)
		}
		checkMapped(t, u.EscapedPath(), got, gotErr)
	}
}
