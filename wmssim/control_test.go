package wmssim

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The whole outbound life: each control call answers the record and appends
// exactly one change of the documented kind.
func TestControlOutboundLifecycle(t *testing.T) {
	s := newSim(t, false)
	var ob Outbound
	h := s.mustJSON(201, "POST", "/wms/_control/outbounds", `{"partner":"partner-acme"}`, &ob)
	if ob.ID == "" || ob.Partner != "partner-acme" || ob.Status != "created" || h.Get(changeIDHeader) != "1" {
		t.Fatalf("outbound %+v, change id %q", ob, h.Get(changeIDHeader))
	}
	s.mustJSON(200, "POST", "/wms/_control/outbounds/"+ob.ID+"/status", `{"status":"picking"}`, &ob)
	if ob.Status != "picking" || len(ob.History) != 2 {
		t.Fatalf("after status: %+v", ob)
	}
	var sh Shipment
	s.mustJSON(201, "POST", "/wms/_control/outbounds/"+ob.ID+"/shipments", ``, &sh)
	if sh.Outbound != ob.ID || sh.Partner != "partner-acme" || sh.Status != "created" {
		t.Fatalf("shipment %+v", sh)
	}
	var lb Label
	s.mustJSON(201, "POST", "/wms/_control/shipments/"+sh.ID+"/labels", `{}`, &lb)
	if lb.Shipment != sh.ID || lb.Status != "printed" || lb.TrackingNumber == "" {
		t.Fatalf("label %+v", lb)
	}
	s.mustJSON(200, "POST", "/wms/_control/shipments/"+sh.ID+"/dispatch", ``, &sh)
	if sh.Status != "dispatched" || sh.DispatchedAt == "" {
		t.Fatalf("dispatched shipment %+v", sh)
	}
	s.mustJSON(200, "POST", "/wms/_control/labels/"+lb.ID+"/status", `{"status":"in-transit"}`, &lb)
	if lb.Status != "in-transit" {
		t.Fatalf("label after status %+v", lb)
	}

	got := s.feed("")
	type row struct{ kind, change, entity, status, shipment string }
	var rows []row
	for _, c := range got.Changes {
		if c.Partner != "partner-acme" {
			t.Errorf("change %s partner %q", c.ID, c.Partner)
		}
		rows = append(rows, row{c.Kind, c.Change, c.Entity, c.Status, c.Shipment})
	}
	want := []row{
		{"outbound", "created", ob.ID, "created", ""},
		{"outbound", "status-changed", ob.ID, "picking", ""},
		{"shipment", "created", sh.ID, "created", sh.ID},
		{"label", "printed", lb.ID, "printed", sh.ID},
		{"shipment", "dispatched", sh.ID, "dispatched", sh.ID},
		{"label", "status-changed", lb.ID, "in-transit", sh.ID},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("feed\n got %+v\nwant %+v", rows, want)
	}
	if got.Next != "6" {
		t.Fatalf("next %q, want 6", got.Next)
	}
}

func TestControlInboundReceiptAdjustment(t *testing.T) {
	s := newSim(t, false)
	var ib Inbound
	s.mustJSON(201, "POST", "/wms/_control/inbounds", `{"partner":"partner-globex","asn":"ASN-77"}`, &ib)
	if ib.Status != "announced" || ib.ASN != "ASN-77" {
		t.Fatalf("inbound %+v", ib)
	}
	s.mustJSON(200, "POST", "/wms/_control/inbounds/"+ib.ID+"/status", `{"status":"arrived"}`, &ib)
	var rc Receipt
	s.mustJSON(201, "POST", "/wms/_control/inbounds/"+ib.ID+"/receipts", `{"products":["ITM-000001"]}`, &rc)
	if rc.Inbound != ib.ID || rc.Partner != "partner-globex" || rc.Status != "received" {
		t.Fatalf("receipt %+v", rc)
	}
	var adj Adjustment
	s.mustJSON(201, "POST", "/wms/_control/adjustments",
		`{"partner":"partner-globex","products":["p1","p2","p3"]}`, &adj)
	if len(adj.Lines) != 3 || adj.Lines[1].Product != "p2" || adj.Lines[1].ID == adj.Lines[0].ID {
		t.Fatalf("adjustment %+v", adj)
	}
	ch := s.feed("?after=2").Changes
	if len(ch) != 2 {
		t.Fatalf("changes after 2: %+v", ch)
	}
	if c := ch[0]; c.Kind != "receipt" || c.Change != "received" || c.Entity != rc.ID || c.Inbound != ib.ID {
		t.Fatalf("receipt change %+v", c)
	}
	if c := ch[1]; c.Kind != "adjustment" || c.Change != "posted" || c.Entity != adj.ID ||
		!reflect.DeepEqual(c.Products, []string{"p1", "p2", "p3"}) {
		t.Fatalf("adjustment change %+v", c)
	}
}

// Items have no feed kind: creating one appends nothing.
func TestControlItemsAppendNoChange(t *testing.T) {
	s := newSim(t, false)
	var it Item
	h := s.mustJSON(201, "POST", "/wms/_control/items", `{"partner":"p","sku":"SKU-1","onHand":4}`, &it)
	if it.SKU != "SKU-1" || it.OnHand != 4 || h.Get(changeIDHeader) != "" {
		t.Fatalf("item %+v, change header %q", it, h.Get(changeIDHeader))
	}
	if p := s.feed(""); len(p.Changes) != 0 || p.Next != "0" {
		t.Fatalf("feed %+v", p)
	}
}

func TestControlHostile(t *testing.T) {
	s := newSim(t, false)
	var ob Outbound
	s.mustJSON(201, "POST", "/wms/_control/outbounds", `{"partner":"a"}`, &ob)
	var sh Shipment
	s.mustJSON(201, "POST", "/wms/_control/outbounds/"+ob.ID+"/shipments", ``, &sh)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"bad json", "POST", "/wms/_control/outbounds", `{"partner":`, 400, codeBadRequest},
		{"not an object", "POST", "/wms/_control/outbounds", `["a"]`, 400, codeBadRequest},
		{"trailing data", "POST", "/wms/_control/outbounds", `{"partner":"a"} {}`, 400, codeBadRequest},
		{"missing partner", "POST", "/wms/_control/outbounds", `{}`, 400, codeBadRequest},
		{"empty body needs partner", "POST", "/wms/_control/inbounds", ``, 400, codeBadRequest},
		{"null partner", "POST", "/wms/_control/outbounds", `{"partner":null}`, 400, codeBadRequest},
		{"empty partner", "POST", "/wms/_control/outbounds", `{"partner":""}`, 400, codeBadRequest},
		{"partner wrong type", "POST", "/wms/_control/outbounds", `{"partner":7}`, 400, codeBadRequest},
		{"unknown field", "POST", "/wms/_control/outbounds", `{"partner":"a","partnerId":"b"}`, 400, codeBadRequest},
		{"field of another call", "POST", "/wms/_control/outbounds", `{"partner":"a","status":"x"}`, 400, codeBadRequest},
		{"control char", "POST", "/wms/_control/outbounds", `{"partner":"a\u0000b"}`, 400, codeBadRequest},
		{"padded", "POST", "/wms/_control/outbounds", `{"partner":" a"}`, 400, codeBadRequest},
		{"long partner", "POST", "/wms/_control/outbounds", `{"partner":"` + strings.Repeat("a", 129) + `"}`, 400, codeBadRequest},
		{"unknown outbound", "POST", "/wms/_control/outbounds/OB-999999/status", `{"status":"x"}`, 404, codeNotFound},
		{"missing status", "POST", "/wms/_control/outbounds/" + ob.ID + "/status", `{}`, 400, codeBadRequest},
		{"unknown outbound shipment", "POST", "/wms/_control/outbounds/nope/shipments", ``, 404, codeNotFound},
		{"unknown shipment label", "POST", "/wms/_control/shipments/nope/labels", ``, 404, codeNotFound},
		{"unknown shipment dispatch", "POST", "/wms/_control/shipments/nope/dispatch", ``, 404, codeNotFound},
		{"dispatch takes no fields", "POST", "/wms/_control/shipments/" + sh.ID + "/dispatch", `{"x":1}`, 400, codeBadRequest},
		{"unknown label", "POST", "/wms/_control/labels/nope/status", `{"status":"x"}`, 404, codeNotFound},
		{"unknown inbound", "POST", "/wms/_control/inbounds/nope/status", `{"status":"x"}`, 404, codeNotFound},
		{"unknown inbound receipt", "POST", "/wms/_control/inbounds/nope/receipts", ``, 404, codeNotFound},
		{"no products", "POST", "/wms/_control/adjustments", `{"partner":"a"}`, 400, codeBadRequest},
		{"empty products", "POST", "/wms/_control/adjustments", `{"partner":"a","products":[]}`, 400, codeBadRequest},
		{"duplicate products", "POST", "/wms/_control/adjustments", `{"partner":"a","products":["x","x"]}`, 400, codeBadRequest},
		{"empty product", "POST", "/wms/_control/adjustments", `{"partner":"a","products":[""]}`, 400, codeBadRequest},
		{"negative onHand", "POST", "/wms/_control/items", `{"partner":"a","sku":"s","onHand":-1}`, 400, codeBadRequest},
		{"unknown call", "POST", "/wms/_control/teleport", `{}`, 404, codeNoSuchResource},
		{"GET on control", "GET", "/wms/_control/outbounds", ``, 405, codeMethod},
		{"too large", "POST", "/wms/_control/outbounds", `{"partner":"a","orderRef":"` + strings.Repeat("x", maxControlBody) + `"}`, 413, codeTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.t = t
			s.wantError(c.status, c.code, c.method, c.path, c.body)
		})
	}
	s.t = t
	// None of the refused calls appended a change.
	if p := s.feed(""); len(p.Changes) != 2 {
		t.Fatalf("refused calls changed the feed: %+v", p.Changes)
	}
	// Dispatching twice is a conflict and appends nothing.
	s.mustJSON(200, "POST", "/wms/_control/shipments/"+sh.ID+"/dispatch", ``, nil)
	s.wantError(409, codeConflict, "POST", "/wms/_control/shipments/"+sh.ID+"/dispatch", ``)
	if p := s.feed(""); len(p.Changes) != 3 {
		t.Fatalf("feed after double dispatch: %d changes", len(p.Changes))
	}
}

// An outage answers 503 with Retry-After on every non-control path until it
// ends; control calls keep working; seconds 0 ends it early.
func TestControlOutage(t *testing.T) {
	s := newSim(t, true)
	var o map[string]any
	s.mustJSON(200, "POST", "/wms/_control/outage", `{"seconds":30}`, &o)
	for _, p := range []string{"/wms/items", "/wms/changes", "/wms/classic/items", "/wms", "/wms/_debug/echo/x"} {
		_, h, _ := s.do("GET", p, "")
		s.wantError(503, codeUnavailable, "GET", p, "")
		if h.Get("Retry-After") != "30" {
			t.Fatalf("%s: Retry-After %q", p, h.Get("Retry-After"))
		}
	}
	s.mustJSON(201, "POST", "/wms/_control/outbounds", `{"partner":"a"}`, nil)
	s.clock.Advance(29*time.Second + 500*time.Millisecond)
	_, h, _ := s.do("GET", "/wms/items", "")
	if h.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After near the end %q", h.Get("Retry-After"))
	}
	s.clock.Advance(time.Second)
	s.mustJSON(200, "GET", "/wms/items", "", nil)

	s.mustJSON(200, "POST", "/wms/_control/outage", `{"seconds":600}`, nil)
	s.wantError(503, codeUnavailable, "GET", "/wms/items", "")
	s.mustJSON(200, "POST", "/wms/_control/outage", `{"seconds":0}`, nil)
	s.mustJSON(200, "GET", "/wms/items", "", nil)

	for _, body := range []string{`{"seconds":-1}`, `{"seconds":86401}`, `{"seconds":"5"}`, `{"seconds":1.5}`, `{}`, `{"seconds":null}`} {
		s.wantError(400, codeBadRequest, "POST", "/wms/_control/outage", body)
	}
}

// Control calls from many goroutines get distinct, gap-free change ids.
func TestControlConcurrentChangeIDs(t *testing.T) {
	s := newSim(t, false)
	const n = 40
	ids := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			req, _ := http.NewRequest("POST", s.srv.URL+"/wms/_control/outbounds",
				strings.NewReader(fmt.Sprintf(`{"partner":"p%d"}`, i%3)))
			resp, err := s.srv.Client().Do(req)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			ids <- resp.Header.Get(changeIDHeader)
		}(i)
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			t.Fatal(err)
		case id := <-ids:
			seen[id] = true
		}
	}
	for i := 1; i <= n; i++ {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("change id %d missing; got %v", i, seen)
		}
	}
}
