package versioning

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// demoConfig is the table of the demo Caddyfile: v4 current on /wms, v3
// deprecated on /wms/classic; four resources renamed, three exposed under
// their own names, nothing else served.
func demoConfig() Config {
	return Config{
		Resources: map[string]string{
			"products":    "items",
			"outbounds":   "outbound-orders",
			"inbounds":    "inbound-orders",
			"adjustments": "stock-adjustments",
		},
		Expose: []string{"shipments", "receipts", "labels"},
		Versions: []Version{
			{Name: "v4", UpstreamPrefix: "/wms", Upstream: "127.0.0.1:8081"},
			{
				Name: "v3", UpstreamPrefix: "/wms/classic",
				Deprecation: &Deprecation{
					Since:     time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
					Sunset:    time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC),
					Successor: "v4",
				},
			},
		},
	}
}

func mustTable(t testing.TB, cfg Config) *Table {
	t.Helper()
	tab, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestMapServed(t *testing.T) {
	tab := mustTable(t, demoConfig())
	for _, tc := range []struct {
		in, version, resource, path, raw string
		short                            bool
	}{
		{"/api/fulfilment/v4/products", "v4", "products", "/wms/items", "/wms/items", false},
		{"/api/fulfilment/v4/products/", "v4", "products", "/wms/items/", "/wms/items/", false},
		{"/api/fulfilment/v4/products/42", "v4", "products", "/wms/items/42", "/wms/items/42", false},
		{"/api/fulfilment/v4/outbounds/o-1/lines", "v4", "outbounds", "/wms/outbound-orders/o-1/lines", "/wms/outbound-orders/o-1/lines", false},
		{"/api/fulfilment/v4/inbounds", "v4", "inbounds", "/wms/inbound-orders", "/wms/inbound-orders", false},
		{"/api/fulfilment/v4/adjustments", "v4", "adjustments", "/wms/stock-adjustments", "/wms/stock-adjustments", false},
		{"/api/fulfilment/v4/shipments", "v4", "shipments", "/wms/shipments", "/wms/shipments", false},
		{"/api/fulfilment/v4/shipments/s%201", "v4", "shipments", "/wms/shipments/s 1", "/wms/shipments/s%201", false},
		{"/api/fulfilment/v4/labels/caf%C3%A9", "v4", "labels", "/wms/labels/café", "/wms/labels/caf%C3%A9", false},
		{"/api/fulfilment/v4/labels/a!b", "v4", "labels", "/wms/labels/a!b", "/wms/labels/a!b", false},
		{"/api/fulfilment/v4/labels/...", "v4", "labels", "/wms/labels/...", "/wms/labels/...", false},
		{"/api/fulfilment/v3/products", "v3", "products", "/wms/classic/items", "/wms/classic/items", false},
		{"/api/fulfilment/v3/receipts/r1", "v3", "receipts", "/wms/classic/receipts/r1", "/wms/classic/receipts/r1", false},
		{"/v4/products", "v4", "products", "/wms/items", "/wms/items", true},
		{"/v4/products/7", "v4", "products", "/wms/items/7", "/wms/items/7", true},
		{"/v3/products", "v3", "products", "/wms/classic/items", "/wms/classic/items", true},
	} {
		m, err := tab.Map(tc.in)
		if err != nil {
			t.Errorf("Map(%q): %v", tc.in, err)
			continue
		}
		if m.Version.Name != tc.version || m.Resource != tc.resource || m.Path != tc.path || m.RawPath != tc.raw || m.Short != tc.short {
			t.Errorf("Map(%q) = {%s %s path=%q raw=%q short=%v}, want {%s %s path=%q raw=%q short=%v}", tc.in,
				m.Version.Name, m.Resource, m.Path, m.RawPath, m.Short, tc.version, tc.resource, tc.path, tc.raw, tc.short)
		}
	}
}

func TestMapRefused(t *testing.T) {
	tab := mustTable(t, demoConfig())
	type want int
	const (
		unknownVersion want = iota
		notFound
		badPath
	)
	for in, w := range map[string]want{
		"/api/fulfilment/v2/products":              unknownVersion,
		"/api/fulfilment/v5/products":              unknownVersion,
		"/api/fulfilment/vX/products":              unknownVersion,
		"/api/fulfilment/V4/products":              unknownVersion,
		"/api/fulfilment/%764/products":            unknownVersion,
		"/api/fulfilment/v5":                       unknownVersion,
		"/api/fulfilment/v5/":                      unknownVersion,
		"/v5/products":                             unknownVersion,
		"/v2/products/1":                           unknownVersion,
		"/api/fulfilment":                          notFound,
		"/api/fulfilment/":                         notFound,
		"/api/fulfilment/v4":                       notFound,
		"/api/fulfilment/v4/":                      notFound,
		"/api/fulfilmentX/v4/products":             notFound,
		"/api/fulfilment/v4/_debug/requests":       notFound,
		"/api/fulfilment/v4/_control/outage":       notFound,
		"/api/fulfilment/v4/%70roducts":            notFound,
		"/api/fulfilment/v4/products;x":            notFound,
		"/api/fulfilment/v4/.well-known":           notFound,
		"/api/fulfilment/v4/changes":               notFound, // the WMS's internal change feed
		"/api/fulfilment/v4/changes/1":             notFound,
		"/api/fulfilment/v3/changes":               notFound,
		"/api/fulfilment/v4/items":                 notFound, // the upstream name of products
		"/api/fulfilment/v4/classic":               notFound,
		"/api/fulfilment/v4/Shipments":             notFound,
		"/v4/shipments":                            notFound,
		"/v4/productsX":                            notFound,
		"/v4":                                      notFound,
		"/v4/":                                     notFound,
		"/":                                        notFound,
		"/other":                                   notFound,
		"/api/fulfilment/v4/products/..":           badPath,
		"/api/fulfilment/v4/products/../../_debug": badPath,
		"/api/fulfilment/v4/../v3/products":        badPath,
		"/api/fulfilment/../../wms/_debug":         badPath,
		"/api/fulfilment/v4/products/%2e%2e/x":     badPath,
		"/api/fulfilment/v4/products/%2E%2e%2f":    badPath,
		"/api/fulfilment/v4/products/a%2fb":        badPath,
		"/api/fulfilment/v4/products//x":           badPath,
		"/api/fulfilment/v4//products":             badPath,
		"//api/fulfilment/v4/products":             badPath,
		"/api/fulfilment/v4/products\\..\\x":       badPath,
		"/api/fulfilment/v4/products/%5c..":        badPath,
		"/api/fulfilment/v4/products/%00":          badPath,
		"/api/fulfilment/v4/products/..;/x":        badPath,
		"/api/fulfilment/v4/products/%252e%252e":   badPath,
		"/api/fulfilment/v4/products/%c0%ae%c0%ae": badPath, // overlong UTF-8 dots
		"/api/fulfilment/v4/products/%ff":          badPath,
		"/v4/products/../../wms/_control":          badPath,
		"api/fulfilment/v4/products":               badPath,
		"":                                         badPath,
	} {
		_, err := tab.Map(in)
		var uv *UnknownVersionError
		var nf *NotFoundError
		var pe *PathError
		switch {
		case err == nil:
			t.Errorf("Map(%q) accepted", in)
		case w == unknownVersion && !errors.As(err, &uv):
			t.Errorf("Map(%q) = %v (%T), want UnknownVersionError", in, err, err)
		case w == notFound && !errors.As(err, &nf):
			t.Errorf("Map(%q) = %v (%T), want NotFoundError", in, err, err)
		case w == badPath && !errors.As(err, &pe):
			t.Errorf("Map(%q) = %v (%T), want PathError", in, err, err)
		}
		if uv != nil && !reflect.DeepEqual(uv.Served, []string{"v4", "v3"}) {
			t.Errorf("Map(%q): served = %v", in, uv.Served)
		}
	}
}

func TestUnmappedRefusedByDefault(t *testing.T) {
	cfg := demoConfig()
	cfg.Expose = nil
	tab := mustTable(t, cfg)
	if _, err := tab.Map("/api/fulfilment/v4/products/1"); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"/api/fulfilment/v4/shipments", "/api/fulfilment/v4/changes", "/api/fulfilment/v3/labels/x"} {
		var nf *NotFoundError
		if m, err := tab.Map(in); !errors.As(err, &nf) {
			t.Errorf("Map(%q) = %q, %v; want NotFoundError", in, m.RawPath, err)
		}
	}
}

func TestExpose(t *testing.T) {
	cfg := demoConfig()
	cfg.Expose = []string{"shipments"}
	cfg.Versions[1].Expose = []string{"receipts", "products"} // v3: products under its own name
	tab := mustTable(t, cfg)
	for in, want := range map[string]string{
		"/api/fulfilment/v4/shipments/s1": "/wms/shipments/s1",
		"/api/fulfilment/v3/shipments":    "/wms/classic/shipments",
		"/api/fulfilment/v3/receipts/r1":  "/wms/classic/receipts/r1",
		"/api/fulfilment/v3/products/7":   "/wms/classic/products/7",
		"/v3/products":                    "/wms/classic/products",
		"/api/fulfilment/v4/products/7":   "/wms/items/7",
	} {
		m, err := tab.Map(in)
		if err != nil || m.RawPath != want || m.Path != want {
			t.Errorf("Map(%q) = raw %q path %q, %v; want %q", in, m.RawPath, m.Path, err, want)
		}
	}
	var nf *NotFoundError
	if _, err := tab.Map("/api/fulfilment/v4/receipts"); !errors.As(err, &nf) {
		t.Errorf("v3's expose served in v4: %v", err)
	}
	// The table copied the list: changing the config afterwards changes nothing.
	cfg.Versions[1].Expose[0] = "changes"
	if _, err := tab.Map("/api/fulfilment/v3/receipts"); err != nil {
		t.Errorf("table changed with its config: %v", err)
	}
}

func TestPassUnmapped(t *testing.T) {
	cfg := demoConfig()
	cfg.Expose = nil
	cfg.PassUnmapped = true
	tab := mustTable(t, cfg)
	for in, want := range map[string]string{
		"/api/fulfilment/v4/products/1":       "/wms/items/1",
		"/api/fulfilment/v4/shipments":        "/wms/shipments",
		"/api/fulfilment/v4/changes":          "/wms/changes", // what PassUnmapped exposes
		"/api/fulfilment/v3/labels/caf%C3%A9": "/wms/classic/labels/caf%C3%A9",
	} {
		m, err := tab.Map(in)
		if err != nil || m.RawPath != want {
			t.Errorf("Map(%q) = %q, %v; want %q", in, m.RawPath, err, want)
		}
	}
	// Still refused: names that are not plain names, unsafe paths.
	var nf *NotFoundError
	if _, err := tab.Map("/api/fulfilment/v4/_debug/requests"); !errors.As(err, &nf) {
		t.Errorf("_debug with PassUnmapped: %v", err)
	}
	var pe *PathError
	if _, err := tab.Map("/api/fulfilment/v4/products/../_debug"); !errors.As(err, &pe) {
		t.Errorf("traversal with PassUnmapped: %v", err)
	}
	// PassUnmapped alone makes a table without any mapping valid.
	bare := mustTable(t, Config{PassUnmapped: true, Versions: []Version{{Name: "v1", UpstreamPrefix: "/x"}}})
	if m, err := bare.Map("/api/fulfilment/v1/a/b"); err != nil || m.RawPath != "/x/a/b" {
		t.Errorf("bare PassUnmapped table: %q %v", m.RawPath, err)
	}
}

func TestVersionOverridesSharedMap(t *testing.T) {
	cfg := demoConfig()
	cfg.Versions[1].Resources = map[string]string{"products": "catalogue/articles"}
	tab := mustTable(t, cfg)
	m, err := tab.Map("/api/fulfilment/v3/products/9")
	if err != nil {
		t.Fatal(err)
	}
	if m.RawPath != "/wms/classic/catalogue/articles/9" {
		t.Fatalf("v3 override: %q", m.RawPath)
	}
	if m, _ := tab.Map("/api/fulfilment/v4/products/9"); m.RawPath != "/wms/items/9" {
		t.Fatalf("v4 keeps the shared map: %q", m.RawPath)
	}
}

func TestCustomBaseShortLabelsAndRootPrefix(t *testing.T) {
	tab := mustTable(t, Config{
		BasePath:    "/partner/api",
		ShortLabels: []string{"products", "shipments"},
		Expose:      []string{"products", "shipments"},
		Versions:    []Version{{Name: "2024-01", UpstreamPrefix: "/"}},
	})
	for in, want := range map[string]string{
		"/partner/api/2024-01/products/1": "/products/1",
		"/2024-01/shipments":              "/shipments",
	} {
		m, err := tab.Map(in)
		if err != nil || m.RawPath != want {
			t.Errorf("Map(%q) = %q, %v; want %q", in, m.RawPath, err, want)
		}
	}
	none := mustTable(t, Config{ShortLabels: []string{}, Expose: []string{"products"}, Versions: []Version{{Name: "v1", UpstreamPrefix: "/x"}}})
	if _, err := none.Map("/v1/products"); err == nil {
		t.Fatal("short label served although none configured")
	}
}

func TestDeprecationHeaders(t *testing.T) {
	tab := mustTable(t, demoConfig())
	m, err := tab.Map("/api/fulfilment/v3/products/42")
	if err != nil {
		t.Fatal(err)
	}
	v := m.Version
	if !v.Deprecated() {
		t.Fatal("v3 not deprecated")
	}
	if got, want := v.DeprecationHeader(), "@1780272000"; got != want {
		t.Errorf("Deprecation = %q, want %q", got, want)
	}
	if got, want := v.SunsetHeader(), "Wed, 30 Jun 2027 00:00:00 GMT"; got != want {
		t.Errorf("Sunset = %q, want %q", got, want)
	}
	if got, want := tab.SuccessorLink(m), `</api/fulfilment/v4/products/42>; rel="successor-version"`; got != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
	short, _ := tab.Map("/v3/products")
	if got, want := tab.SuccessorLink(short), `</v4/products>; rel="successor-version"`; got != want {
		t.Errorf("short Link = %q, want %q", got, want)
	}
	cur, _ := tab.Map("/api/fulfilment/v4/products")
	if cur.Version.Deprecated() || cur.Version.DeprecationHeader() != "" || cur.Version.SunsetHeader() != "" || tab.SuccessorLink(cur) != "" {
		t.Error("v4 carries deprecation data")
	}
	if cur.Version.Upstream != "127.0.0.1:8081" || cur.Version.UpstreamPrefixPath() != "/wms" {
		t.Errorf("v4 upstream = %q prefix %q", cur.Version.Upstream, cur.Version.UpstreamPrefixPath())
	}
}

func TestNewRefuses(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := func(name, prefix string) Version {
		return Version{Name: name, UpstreamPrefix: prefix, Expose: []string{"a"}}
	}
	dep := func(d Deprecation) []Version { return []Version{{Name: "v1", Expose: []string{"a"}, Deprecation: &d}} }
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"no versions":        {Config{}, "no versions configured"},
		"bad base":           {Config{BasePath: "api", Versions: []Version{v("v1", "/x")}}, "base path"},
		"base slash":         {Config{BasePath: "/api/", Versions: []Version{v("v1", "/x")}}, "base path"},
		"base root":          {Config{BasePath: "/", Versions: []Version{v("v1", "/x")}}, "base path"},
		"base dots":          {Config{BasePath: "/api/../x", Versions: []Version{v("v1", "/x")}}, "base path"},
		"bad label":          {Config{ShortLabels: []string{"a/b"}, Versions: []Version{v("v1", "/x")}}, "short label"},
		"bad name":           {Config{Versions: []Version{v("v/1", "/x")}}, "version name"},
		"empty name":         {Config{Versions: []Version{v("", "/x")}}, "version name"},
		"duplicate":          {Config{Versions: []Version{v("v1", "/x"), v("v1", "/y")}}, "configured twice"},
		"relative prefix":    {Config{Versions: []Version{v("v1", "wms")}}, "upstream prefix"},
		"prefix slash":       {Config{Versions: []Version{v("v1", "/wms/")}}, "upstream prefix"},
		"prefix dots":        {Config{Versions: []Version{v("v1", "/wms/..")}}, "upstream prefix"},
		"prefix %2f":         {Config{Versions: []Version{v("v1", "/wms%2fx")}}, "upstream prefix"},
		"shared map name":    {Config{Resources: map[string]string{"_x": "y"}, Versions: []Version{v("v1", "/x")}}, "public name"},
		"shared map target":  {Config{Resources: map[string]string{"x": "../y"}, Versions: []Version{v("v1", "/x")}}, "upstream path"},
		"map leading slash":  {Config{Versions: []Version{{Name: "v1", Resources: map[string]string{"x": "/y"}}}}, "upstream path"},
		"map trailing slash": {Config{Versions: []Version{{Name: "v1", Resources: map[string]string{"x": "y/"}}}}, "upstream path"},
		"map empty":          {Config{Versions: []Version{{Name: "v1", Resources: map[string]string{"x": ""}}}}, "upstream path"},
		"no date":            {Config{Versions: dep(Deprecation{})}, "without a date"},
		"sunset first":       {Config{Versions: dep(Deprecation{Since: day, Sunset: day.Add(-time.Hour)})}, "before the deprecation date"},
		"self successor":     {Config{Versions: dep(Deprecation{Since: day, Successor: "v1"})}, "the version itself"},
		"unknown successor":  {Config{Versions: dep(Deprecation{Since: day, Successor: "v9"})}, "not a served version"},
		"serves nothing":     {Config{Versions: []Version{{Name: "v1", UpstreamPrefix: "/x"}}}, `version "v1" serves no resource`},
		"one serves nothing": {Config{Versions: []Version{v("v2", "/x"), {Name: "v1"}}}, `version "v1" serves no resource`},
		"expose bad name":    {Config{Expose: []string{"_debug"}, Versions: []Version{v("v1", "/x")}}, `expose: name "_debug"`},
		"expose path":        {Config{Expose: []string{"a/b"}, Versions: []Version{v("v1", "/x")}}, "plain name"},
		"expose empty":       {Config{Expose: []string{""}, Versions: []Version{v("v1", "/x")}}, "plain name"},
		"expose twice":       {Config{Expose: []string{"b", "b"}, Versions: []Version{v("v1", "/x")}}, `expose: "b" given twice`},
		"expose and map": {Config{Expose: []string{"b"}, Resources: map[string]string{"b": "c"},
			Versions: []Version{v("v1", "/x")}}, `expose: "b" is also mapped`},
		"version expose bad": {Config{Versions: []Version{{Name: "v1", Expose: []string{"a", ".."}}}}, `version "v1": expose: name ".."`},
		"version expose and map": {Config{Versions: []Version{{Name: "v1", Expose: []string{"a"},
			Resources: map[string]string{"a": "b"}}}}, `version "v1": expose: "a" is also mapped`},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New() error = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestNewCopiesVersions(t *testing.T) {
	cfg := demoConfig()
	tab := mustTable(t, cfg)
	cfg.Versions[0].UpstreamPrefix = "/changed"
	cfg.Versions[0].Name = "changed"
	m, err := tab.Map("/api/fulfilment/v4/products")
	if err != nil || m.RawPath != "/wms/items" {
		t.Fatalf("table changed with its config: %q %v", m.RawPath, err)
	}
	if !reflect.DeepEqual(tab.Names(), []string{"v4", "v3"}) || tab.BasePath() != DefaultBasePath {
		t.Fatalf("names %v base %q", tab.Names(), tab.BasePath())
	}
}

func TestMapAllocations(t *testing.T) {
	tab := mustTable(t, demoConfig())
	for in, max := range map[string]float64{
		"/api/fulfilment/v4/products":         0,
		"/api/fulfilment/v4/products/42":      1,
		"/v4/products/42":                     1,
		"/api/fulfilment/v4/shipments":        0,
		"/api/fulfilment/v4/shipments/s-1":    1,
		"/api/fulfilment/v4/labels/caf%C3%A9": 2,
	} {
		got := testing.AllocsPerRun(200, func() { _, _ = tab.Map(in) })
		if got > max {
			t.Errorf("Map(%q) allocates %v times, want at most %v", in, got, max)
		}
	}
}

// Versions lists the table's versions in configuration order, as the
// values a mapping names; MappedResources each version's mapped and
// exposed resources, sorted.
func TestVersionsAndTheirMappedResources(t *testing.T) {
	tbl, err := New(Config{
		Resources: map[string]string{"products": "items"},
		Expose:    []string{"shipments"},
		Versions: []Version{
			{Name: "v4", UpstreamPrefix: "/wms", Expose: []string{"labels"}},
			{Name: "v3", UpstreamPrefix: "/old", Resources: map[string]string{"adjustments": "stock"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	vs := tbl.Versions()
	if len(vs) != 2 || vs[0].Name != "v4" || vs[1].Name != "v3" {
		t.Fatalf("versions %v", vs)
	}
	m, err := tbl.Map("/api/fulfilment/v3/products")
	if err != nil || m.Version != vs[1] {
		t.Fatalf("v3's mapping names %p (%v), want %p", m.Version, err, vs[1])
	}
	for i, want := range [][]string{{"labels", "products", "shipments"}, {"adjustments", "products", "shipments"}} {
		if got := vs[i].MappedResources(); !slices.Equal(got, want) {
			t.Errorf("%s: mapped resources %v, want %v", vs[i].Name, got, want)
		}
	}
	vs[0] = nil
	if tbl.Versions()[0] == nil {
		t.Error("Versions hands out the table's own slice")
	}
}
