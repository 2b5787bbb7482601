package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The real binary serves the WMS simulator from a Caddyfile: a control call
// appends a change the feed then shows, and a config reload keeps the
// warehouse (same name) rather than wiping it.
func TestWMSSimulatorServesFeed(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	const cf = `{
	admin {$ADMIN}
}

http://127.0.0.1:{$WMS_PORT} {
	wms_simulator {
		name e2e
		seed %s
	}
}
`
	g := startGateway(t, fmt.Sprintf(cf, "on"), fmt.Sprintf("WMS_PORT=%d", port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+"/wms")

	status, h, body := do(t, "POST", base+"/wms/_control/outbounds", strings.NewReader(`{"partner":"partner-acme"}`))
	if status != 201 || h.Get("Server") != "LegacyWMS/4.2" {
		t.Fatalf("create outbound: %d %v %s", status, h, body)
	}
	var ob struct{ ID, Partner, Status string }
	if err := json.Unmarshal(body, &ob); err != nil || ob.ID == "" || ob.Status != "created" {
		t.Fatalf("outbound %s (%v)", body, err)
	}
	status, _, body = do(t, "POST", base+"/wms/_control/outbounds/"+ob.ID+"/status", strings.NewReader(`{"status":"picking"}`))
	if status != 200 {
		t.Fatalf("status change: %d %s", status, body)
	}

	type feed struct {
		Changes []struct{ ID, Partner, Kind, Entity, Change, Status string }
		Next    string
	}
	read := func(after string) feed {
		t.Helper()
		status, _, body := do(t, "GET", base+"/wms/changes?after="+after, nil)
		var f feed
		if status != 200 || json.Unmarshal(body, &f) != nil {
			t.Fatalf("feed: %d %s", status, body)
		}
		return f
	}
	f := read("")
	if len(f.Changes) != 2 || f.Next != f.Changes[1].ID {
		t.Fatalf("feed %+v", f)
	}
	if c := f.Changes[1]; c.Kind != "outbound" || c.Change != "status-changed" || c.Entity != ob.ID ||
		c.Status != "picking" || c.Partner != "partner-acme" {
		t.Fatalf("change %+v", c)
	}

	// Partner isolation and the seeded items.
	status, _, body = do(t, "GET", base+"/wms/outbound-orders/"+ob.ID, nil, "X-Partner-Id", "partner-globex")
	if status != 404 || !strings.Contains(string(body), `"errorCode"`) {
		t.Fatalf("other partner's outbound: %d %s", status, body)
	}
	status, _, body = do(t, "GET", base+"/wms/classic/items", nil, "X-Partner-Id", "partner-globex")
	if status != 200 || !strings.Contains(string(body), `"total":2`) {
		t.Fatalf("globex items: %d %s", status, body)
	}

	// A reload keeps the warehouse: the feed continues after the cursor.
	g.Reload(fmt.Sprintf(cf, "off"))
	status, _, body = do(t, "POST", base+"/wms/_control/outbounds/"+ob.ID+"/shipments", nil)
	if status != 201 {
		t.Fatalf("shipment after reload: %d %s", status, body)
	}
	f = read(f.Next)
	if len(f.Changes) != 1 || f.Changes[0].Kind != "shipment" || f.Changes[0].Change != "created" {
		t.Fatalf("feed after reload %+v", f)
	}
	status, _, body = do(t, "GET", base+"/wms/changes?after=garbage", nil)
	if status != 400 || !strings.Contains(string(body), "WMS-400-INVALID-CURSOR") {
		t.Fatalf("garbage cursor: %d %s", status, body)
	}
}
