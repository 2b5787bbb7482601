package wmssim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// page decodes a list answer with records of type R.
type page[R any] struct {
	Items    []R `json:"items"`
	Page     int `json:"page"`
	PageSize int `json:"page_size"`
	Total    int `json:"total"`
}

func TestResourcesSeededItems(t *testing.T) {
	s := newSim(t, true)
	var all page[Item]
	s.mustJSON(200, "GET", "/wms/items", "", &all)
	if all.Total != len(demoItems) || len(all.Items) != len(demoItems) || all.Page != 1 || all.PageSize != defaultPageSize {
		t.Fatalf("items %+v", all)
	}
	var acme page[Item]
	s.mustJSON(200, "GET", "/wms/items", "", &acme, partnerHeader, "partner-acme")
	if acme.Total != 3 {
		t.Fatalf("acme sees %d items", acme.Total)
	}
	for _, it := range acme.Items {
		if it.Partner != "partner-acme" || it.ID == "" || it.SKU == "" {
			t.Fatalf("acme sees %+v", it)
		}
	}
	var globex page[Item]
	s.mustJSON(200, "GET", "/wms/classic/items", "", &globex, partnerHeader, "partner-globex")
	if globex.Total != 2 || globex.Items[0].Partner != "partner-globex" {
		t.Fatalf("globex (classic) sees %+v", globex)
	}
	// No seed: empty list, still a list.
	e := newSim(t, false)
	_, _, b := e.do("GET", "/wms/items", "")
	if string(b) != `{"items":[],"page":1,"page_size":50,"total":0}`+"\n" {
		t.Fatalf("empty list %s", b)
	}
}

// A record of another partner answers 404, on both paths; without the
// header every record is visible.
func TestResourcesPartnerIsolation(t *testing.T) {
	s := newSim(t, true)
	var ob Outbound
	s.mustJSON(201, "POST", "/wms/_control/outbounds", `{"partner":"partner-acme"}`, &ob)
	var sh Shipment
	s.mustJSON(201, "POST", "/wms/_control/outbounds/"+ob.ID+"/shipments", "", &sh)
	for _, base := range []string{"/wms/", "/wms/classic/"} {
		for _, p := range []string{"outbound-orders/" + ob.ID, "shipments/" + sh.ID, "items/ITM-000001"} {
			s.mustJSON(200, "GET", base+p, "", nil, partnerHeader, "partner-acme")
			s.mustJSON(200, "GET", base+p, "", nil)
			s.wantError(404, codeNotFound, "GET", base+p, "", partnerHeader, "partner-globex")
		}
		var l page[Shipment]
		s.mustJSON(200, "GET", base+"shipments", "", &l, partnerHeader, "partner-globex")
		if l.Total != 0 || len(l.Items) != 0 {
			t.Fatalf("globex lists acme's shipments: %+v", l)
		}
	}
	var got Outbound
	s.mustJSON(200, "GET", "/wms/outbound-orders/"+ob.ID, "", &got, partnerHeader, "partner-acme")
	if got.ID != ob.ID || got.Partner != "partner-acme" || len(got.Shipments) != 1 || got.Shipments[0] != sh.ID {
		t.Fatalf("outbound read back %+v", got)
	}
}

func TestResourcesPaging(t *testing.T) {
	s := newSim(t, false)
	for i := 0; i < 7; i++ {
		s.mustJSON(201, "POST", "/wms/_control/inbounds", fmt.Sprintf(`{"partner":"p%d"}`, i%2), nil)
	}
	var p page[Inbound]
	s.mustJSON(200, "GET", "/wms/inbound-orders?page=2&page_size=3", "", &p)
	if p.Total != 7 || p.Page != 2 || p.PageSize != 3 || len(p.Items) != 3 || p.Items[0].ID != "IB-000004" {
		t.Fatalf("page 2: %+v", p)
	}
	s.mustJSON(200, "GET", "/wms/inbound-orders?page=3&page_size=3", "", &p)
	if len(p.Items) != 1 || p.Items[0].ID != "IB-000007" {
		t.Fatalf("page 3: %+v", p)
	}
	s.mustJSON(200, "GET", "/wms/inbound-orders?page=9&page_size=3", "", &p)
	if len(p.Items) != 0 || p.Total != 7 {
		t.Fatalf("page past the end: %+v", p)
	}
	s.mustJSON(200, "GET", "/wms/inbound-orders?page_size=2", "", &p, partnerHeader, "p0")
	if p.Total != 4 || len(p.Items) != 2 || p.Items[1].ID != "IB-000003" {
		t.Fatalf("p0 page: %+v", p)
	}
	s.mustJSON(200, "POST", "/wms/_control/inbounds/IB-000002/status", `{"status":"arrived"}`, nil)
	s.mustJSON(200, "GET", "/wms/inbound-orders?status=arrived", "", &p)
	if p.Total != 1 || p.Items[0].ID != "IB-000002" {
		t.Fatalf("status filter: %+v", p)
	}
}

func TestResourcesHostile(t *testing.T) {
	s := newSim(t, true)
	for _, q := range []string{"page=0", "page=-1", "page=x", "page=1e3", "page_size=0",
		"page_size=501", "page_size=abc", "page=99999999999999999999"} {
		s.wantError(400, codeBadRequest, "GET", "/wms/items?"+q, "")
	}
	s.wantError(404, codeNoSuchResource, "GET", "/wms/warehouses", "")
	s.wantError(404, codeNoSuchResource, "GET", "/wms/items/ITM-000001/extra", "")
	s.wantError(404, codeNoSuchResource, "GET", "/wms/classic", "")
	s.wantError(404, codeNotFound, "GET", "/wms/items/ITM-999999", "")
	s.wantError(404, codeNoSuchResource, "GET", "/api/fulfilment/v4/items", "")
	s.wantError(404, codeNoSuchResource, "GET", "/wmsx/items", "")
	h := s.mustJSON(405, "DELETE", "/wms/items/ITM-000001", "", nil)
	if h.Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q", h.Get("Allow"))
	}
	s.wantError(405, codeMethod, "POST", "/wms/items", `{}`)
}

// Every answer says it comes from the legacy system.
func TestResourcesLegacyLook(t *testing.T) {
	s := newSim(t, true)
	for _, p := range []string{"/wms", "/wms/items", "/wms/nope", "/elsewhere", "/wms/changes?after=x"} {
		_, h, b := s.do("GET", p, "")
		if h.Get("Server") != serverHeader {
			t.Fatalf("%s: Server %q", p, h.Get("Server"))
		}
		if !json.Valid(b) {
			t.Fatalf("%s: body not JSON: %s", p, b)
		}
	}
	var idx map[string]any
	s.mustJSON(200, "GET", "/wms/", "", &idx)
	if idx["system"] != "LegacyWMS" || idx["feed"] != "/wms/changes" {
		t.Fatalf("index %v", idx)
	}
}

// An X-Partner-Id header that is present but empty isolates too: it matches
// no partner, rather than showing everyone's records.
func TestResourcesEmptyPartnerHeaderIsolates(t *testing.T) {
	s := newSim(t, true)
	req, _ := http.NewRequest("GET", s.srv.URL+"/wms/items", nil)
	req.Header["X-Partner-Id"] = []string{""}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var p page[Item]
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil || p.Total != 0 {
		t.Fatalf("empty partner header sees %d items (%v)", p.Total, err)
	}
	s.wantError(404, codeNotFound, "GET", "/wms/items/ITM-000001", "", "X-Partner-Id", "")
}
