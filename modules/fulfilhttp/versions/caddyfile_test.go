package versions

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestVersionUnmarshalCaddyfile(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name, input string
		want        VersionHandler
	}{
		{"minimal", `fulfilment_version {
			version v1
		}`, VersionHandler{Versions: []VersionConfig{{Name: "v1"}}}},
		{"full", `fulfilment_version {
			base_path /partner/api
			short_labels products shipments
			upstream 127.0.0.1:8081
			map products items
			map outbounds outbound-orders
			expose shipments receipts
			expose labels
			pass_unmapped
			methods GET HEAD POST
			version v4 {
				upstream_prefix /wms
				upstream localhost:9000
				map adjustments stock-adjustments
				expose returns
				expose products
			}
			version v3 {
				upstream_prefix /wms/classic
				deprecated 2026-06-01T00:00:00Z sunset 2027-06-30T00:00:00Z successor v4
				methods GET
			}
		}`, VersionHandler{
			BasePath:     "/partner/api",
			ShortLabels:  []string{"products", "shipments"},
			Upstream:     "127.0.0.1:8081",
			Resources:    map[string]string{"products": "items", "outbounds": "outbound-orders"},
			Expose:       []string{"shipments", "receipts", "labels"},
			PassUnmapped: true,
			Methods:      []string{"GET", "HEAD", "POST"},
			Versions: []VersionConfig{
				{Name: "v4", UpstreamPrefix: "/wms", Upstream: "localhost:9000",
					Resources: map[string]string{"adjustments": "stock-adjustments"}, Expose: []string{"returns", "products"}},
				{Name: "v3", UpstreamPrefix: "/wms/classic", Deprecated: &DeprecationConfig{
					Since: day(2026, 6, 1), Sunset: day(2027, 6, 30), Successor: "v4"}, Methods: []string{"GET"}},
			},
		}},
		{"expose only", `fulfilment_version {
			expose shipments
			version v1 {
				expose receipts labels
			}
		}`, VersionHandler{Expose: []string{"shipments"}, Versions: []VersionConfig{{Name: "v1", Expose: []string{"receipts", "labels"}}}}},
		{"no short labels", `fulfilment_version {
			short_labels
			version v1
		}`, VersionHandler{ShortLabels: []string{}, Versions: []VersionConfig{{Name: "v1"}}}},
		{"plain dates, successor first, offset time", `fulfilment_version {
			version v2
			version v1 {
				deprecated 2026-01-02T03:04:05+02:00 successor v2 sunset 2027-01-01
			}
		}`, VersionHandler{Versions: []VersionConfig{{Name: "v2"}, {Name: "v1", Deprecated: &DeprecationConfig{
			Since: time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC), Sunset: day(2027, 1, 1), Successor: "v2"}}}}},
		{"deprecated date only", `fulfilment_version {
			version v1 {
				deprecated 2026-06-01
			}
		}`, VersionHandler{Versions: []VersionConfig{{Name: "v1", Deprecated: &DeprecationConfig{Since: day(2026, 6, 1)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got VersionHandler
			if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestVersionUnmarshalCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{`fulfilment_version`, "at least one version block"},
		{`fulfilment_version {
		}`, "at least one version block"},
		{`fulfilment_version extra {
			version v1
		}`, "wrong argument count"},
		{`fulfilment_version {
			bogus
		}`, `unknown fulfilment_version option "bogus"`},
		{`fulfilment_version {
			base_path
		}`, "wrong argument count"},
		{`fulfilment_version {
			base_path /a /b
		}`, "wrong argument count"},
		{`fulfilment_version {
			base_path /a
			base_path /b
		}`, "base_path given twice"},
		{`fulfilment_version {
			base_path ""
		}`, "base_path must not be empty"},
		{`fulfilment_version {
			short_labels a
			short_labels b
		}`, "short_labels given twice"},
		{`fulfilment_version {
			upstream
		}`, "wrong argument count"},
		{`fulfilment_version {
			upstream a:1
			upstream b:2
		}`, "upstream given twice"},
		{`fulfilment_version {
			map products
		}`, "map needs two arguments"},
		{`fulfilment_version {
			map products items extra
		}`, "map needs two arguments"},
		{`fulfilment_version {
			map products items
			map products goods
		}`, `map for "products" given twice`},
		{`fulfilment_version {
			only_mapped
		}`, `unknown fulfilment_version option "only_mapped"`},
		{`fulfilment_version {
			pass_unmapped yes
		}`, "wrong argument count"},
		{`fulfilment_version {
			pass_unmapped
			pass_unmapped
		}`, "pass_unmapped given twice"},
		{`fulfilment_version {
			expose
		}`, "expose needs at least one resource name"},
		{`fulfilment_version {
			expose shipments labels
			expose shipments
		}`, `expose: "shipments" given twice`},
		{`fulfilment_version {
			expose a a
		}`, `expose: "a" given twice`},
		{`fulfilment_version {
			map products items
			expose products
		}`, `"products" is both exposed and mapped`},
		{`fulfilment_version {
			expose products
			map products items
		}`, `"products" is both exposed and mapped`},
		{`fulfilment_version {
			version v1 {
				expose
			}
		}`, "expose needs at least one resource name"},
		{`fulfilment_version {
			version v1 {
				expose a
				map a b
			}
		}`, `"a" is both exposed and mapped`},
		{`fulfilment_version {
			version v1 {
				pass_unmapped
			}
		}`, `unknown option "pass_unmapped" in version v1`},
		{`fulfilment_version {
			version
		}`, "version needs a name"},
		{`fulfilment_version {
			version v1 v2
		}`, "wrong argument count"},
		{`fulfilment_version {
			version v1
			version v1
		}`, `version "v1" given twice`},
		{`fulfilment_version {
			version v1 {
				bogus
			}
		}`, `unknown option "bogus" in version v1`},
		{`fulfilment_version {
			version v1 {
				upstream_prefix
			}
		}`, "wrong argument count"},
		{`fulfilment_version {
			version v1 {
				upstream_prefix /a
				upstream_prefix /b
			}
		}`, "upstream_prefix given twice"},
		{`fulfilment_version {
			version v1 {
				upstream a:1 b:2
			}
		}`, "wrong argument count"},
		{`fulfilment_version {
			version v1 {
				map a
			}
		}`, "map needs two arguments"},
		{`fulfilment_version {
			version v1 {
				deprecated
			}
		}`, "deprecated needs a date"},
		{`fulfilment_version {
			version v1 {
				deprecated tomorrow
			}
		}`, `deprecated: date "tomorrow" is neither RFC 3339`},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 sunset
			}
		}`, "sunset needs a value"},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 sunset 30/06/2027
			}
		}`, `sunset: date "30/06/2027"`},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 sunset 2027-01-01 sunset 2028-01-01
			}
		}`, "sunset given twice"},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 successor
			}
		}`, "successor needs a value"},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 successor v2 successor v3
			}
		}`, "successor given twice"},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01 until 2027-01-01
			}
		}`, `deprecated: unexpected "until"`},
		{`fulfilment_version {
			version v1 {
				deprecated 2026-06-01
				deprecated 2026-07-01
			}
		}`, "deprecated given twice"},
		{`fulfilment_version {
			methods
			version v1
		}`, "methods needs at least one method"},
		{`fulfilment_version {
			methods GET
			methods POST
			version v1
		}`, "methods given twice"},
		{`fulfilment_version {
			version v1 {
				methods
			}
		}`, "methods needs at least one method"},
		{`fulfilment_version {
			version v1 {
				methods GET
				methods GET HEAD
			}
		}`, "methods given twice"},
	} {
		var h VersionHandler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("input:\n%s\nerror = %v, want it to contain %q", tc.input, err, tc.want)
		}
	}
}
