package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The guard gives every request an id: the partner gets it on the answer
// (refusals too), the WMS gets the same one, and a partner cannot choose it.
func TestRequestIDReachesUpstreamAndPartner(t *testing.T) {
	t.Parallel()
	g := startRepoGateway(t, repoCaddyfile(t))
	auth := gatewayHeaders(t, g.Base)

	status, h, body := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments?probe=rid", nil,
		append([]string{"X-Request-Id", "chosen-by-partner"}, auth...)...)
	rid := h.Get("X-Request-Id")
	if status != http.StatusOK || len(rid) != 36 {
		t.Fatalf("answer: %d, X-Request-Id %q: %s", status, rid, body)
	}
	status, _, body = do(t, http.MethodGet, g.WMS+"/wms/_debug/requests", nil)
	var log []struct {
		RawQuery string              `json:"raw_query"`
		Headers  map[string][]string `json:"headers"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &log) != nil {
		t.Fatalf("simulator log: %d %s", status, body)
	}
	found := false
	for _, e := range log {
		if e.RawQuery == "probe=rid" {
			found = true
			if got := e.Headers["X-Request-Id"]; len(got) != 1 || got[0] != rid {
				t.Fatalf("the WMS got X-Request-Id %v, the partner %q", got, rid)
			}
		}
	}
	if !found {
		t.Fatal("the request never reached the simulator")
	}
	if status, h, _ := do(t, http.MethodGet, g.Base+"/api/fulfilment/v4/shipments", nil); status != http.StatusUnauthorized ||
		len(h.Get("X-Request-Id")) != 36 {
		t.Fatalf("refusal: %d, X-Request-Id %q", status, h.Get("X-Request-Id"))
	}
}
