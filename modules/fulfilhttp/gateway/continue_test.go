package gateway

import (
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// postJobs is a gateway whose version mapping also serves POST.
const postJobs = "\t\ttoken\n\t\tauth\n\t\tversion {\n\t\t\tmethods GET HEAD POST\n\t\t\tmap products items\n" +
	"\t\t\tversion v4 {\n\t\t\t\tupstream_prefix /wms\n\t\t\t}\n\t\t}\n"

// A partner's Expect: 100-continue is answered, by the gateway itself
// when the proxy reads the body (the WMS's own 1xx answers are held
// back), and the body then reaches the WMS whole.
func TestExpectContinueIsAnswered(t *testing.T) {
	base, up := startGateway(t, postJobs)
	tok := token(t, base)
	body := strings.Repeat("x", 64<<10)
	var continued atomic.Bool
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{Got100Continue: func() { continued.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/fulfilment/v4/products", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second}, Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !continued.Load() {
		t.Errorf("no 100 Continue before the answer %d", res.StatusCode)
	}
	if res.StatusCode != http.StatusOK {
		t.Errorf("status %d, want the WMS's 200", res.StatusCode)
	}
	if seen := up.take(); len(seen) != 1 || seen[0].method != http.MethodPost || seen[0].body != body {
		t.Errorf("the WMS got %d requests (first body %d bytes), want one POST with the %d bytes sent", len(seen), bodyLen(seen), len(body))
	}
}

// bodyLen is the length of the first request's body in rs (0 for none).
func bodyLen(rs []received) int {
	if len(rs) == 0 {
		return 0
	}
	return len(rs[0].body)
}
