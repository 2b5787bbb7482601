package versioning

import (
	"net/url"
	"testing"
)

// BenchmarkMap measures the per-request lookup for the common shapes.
func BenchmarkMap(b *testing.B) {
	tab := mustTable(b, demoConfig())
	for _, p := range []struct{ name, path string }{
		{"list", "/api/fulfilment/v4/products"},
		{"item", "/api/fulfilment/v4/outbounds/o-12345"},
		{"short", "/v3/products/sku-1"},
		{"exposed", "/api/fulfilment/v4/shipments/s-1"},
		{"escaped", "/api/fulfilment/v4/labels/caf%C3%A9"},
		{"unmapped", "/api/fulfilment/v4/changes"},
		{"unknown-version", "/api/fulfilment/v5/products"},
		{"traversal", "/api/fulfilment/v4/products/%2e%2e/x"},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tab.Map(p.path)
			}
		})
	}
}

// BenchmarkMapURL measures what the gateway calls per request: a
// collection (answered from the index) and an item (the general path).
func BenchmarkMapURL(b *testing.B) {
	tab := mustTable(b, demoConfig())
	for _, p := range []struct{ name, target string }{
		{"list", "/api/fulfilment/v4/products?sku=A-1"},
		{"short-list", "/v4/products"},
		{"item", "/api/fulfilment/v4/outbounds/o-12345"},
	} {
		u, err := url.ParseRequestURI(p.target)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tab.MapURL(u)
			}
		})
	}
}
