package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Errors of the warehouse system reach partners as the interface's
// problem+json, never in the WMS's own format: a record that does not exist,
// and the WMS down for maintenance (503 with Retry-After).
func TestUpstreamErrorsAreProblems(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	auth := gatewayHeaders(t, g.Base)

	check := func(what, path string, wantStatus int, wantType string) http.Header {
		t.Helper()
		status, h, body := do(t, http.MethodGet, g.Base+path, nil, auth...)
		var p struct {
			Type   string `json:"type"`
			Status int    `json:"status"`
		}
		if status != wantStatus || h.Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(body, &p) != nil || p.Status != wantStatus ||
			p.Type != "https://github.com/fulfilgate/fulfilgate/blob/main/docs/partners/errors.md#"+wantType {
			t.Fatalf("%s: %d %q %s", what, status, h.Get("Content-Type"), body)
		}
		if strings.Contains(string(body), "WMS-") || strings.Contains(h.Get("Server"), "LegacyWMS") {
			t.Fatalf("%s: the WMS's error format reached the partner: %v %s", what, h, body)
		}
		return h
	}
	check("missing record", "/api/fulfilment/v4/products/ITM-999999", 404, "not-found")

	status, _, body := do(t, http.MethodPost, g.WMS+"/wms/_control/outage", strings.NewReader(`{"seconds":30}`),
		"Content-Type", "application/json")
	if status != http.StatusOK {
		t.Fatalf("starting the outage: %d %s", status, body)
	}
	h := check("WMS down", "/api/fulfilment/v4/shipments", 503, "upstream-unavailable")
	if h.Get("Retry-After") == "" {
		t.Fatalf("Retry-After of the WMS dropped: %v", h)
	}
}
