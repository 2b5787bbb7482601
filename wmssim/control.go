package wmssim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Limits of control input.
const (
	maxIDLen         = 128
	maxTextLen       = 256
	maxProducts      = 1000
	maxOutageSecs    = 86400
	changeIDHeader   = "X-WMS-Change-Id"
	allowControlPOST = "POST"
)

// controlRequest is the union of every control body's fields; each route
// says which it reads, and refuses the others.
type controlRequest struct {
	Partner        string   `json:"partner"`
	Status         string   `json:"status"`
	Products       []string `json:"products"`
	OrderRef       string   `json:"orderRef"`
	ASN            string   `json:"asn"`
	Carrier        string   `json:"carrier"`
	TrackingNumber string   `json:"trackingNumber"`
	Reason         string   `json:"reason"`
	SKU            string   `json:"sku"`
	Description    string   `json:"description"`
	OnHand         *int     `json:"onHand"`
	Seconds        *int     `json:"seconds"`
}

// controlRoute is one control call: its path (with "{id}" for an id), the
// body fields it accepts, the ones it needs, and what it does. run is called
// with the store locked.
type controlRoute struct {
	path     []string
	fields   []string
	required []string
	created  bool
	run      func(s *Store, id string, req *controlRequest) (any, *Change, *opError)
}

func changed(c Change) *Change { return &c }

var controlRoutes = []controlRoute{
	{[]string{"outbounds"}, []string{"partner", "orderRef"}, []string{"partner"}, true,
		func(s *Store, _ string, q *controlRequest) (any, *Change, *opError) {
			rec, c := s.createOutbound(q.Partner, q.OrderRef)
			return rec, changed(c), nil
		}},
	{[]string{"outbounds", "{id}", "status"}, []string{"status"}, []string{"status"}, false,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.setOutboundStatus(id, q.Status))
		}},
	{[]string{"outbounds", "{id}", "shipments"}, []string{"carrier"}, nil, true,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.createShipment(id, q.Carrier))
		}},
	{[]string{"shipments", "{id}", "labels"}, []string{"trackingNumber"}, nil, true,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.printLabel(id, q.TrackingNumber))
		}},
	{[]string{"shipments", "{id}", "dispatch"}, nil, nil, false,
		func(s *Store, id string, _ *controlRequest) (any, *Change, *opError) {
			return wrap(s.dispatchShipment(id))
		}},
	{[]string{"labels", "{id}", "status"}, []string{"status"}, []string{"status"}, false,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.setLabelStatus(id, q.Status))
		}},
	{[]string{"inbounds"}, []string{"partner", "asn"}, []string{"partner"}, true,
		func(s *Store, _ string, q *controlRequest) (any, *Change, *opError) {
			rec, c := s.createInbound(q.Partner, q.ASN)
			return rec, changed(c), nil
		}},
	{[]string{"inbounds", "{id}", "status"}, []string{"status"}, []string{"status"}, false,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.setInboundStatus(id, q.Status))
		}},
	{[]string{"inbounds", "{id}", "receipts"}, []string{"products"}, nil, true,
		func(s *Store, id string, q *controlRequest) (any, *Change, *opError) {
			return wrap(s.receive(id, q.Products))
		}},
	{[]string{"adjustments"}, []string{"partner", "products", "reason"}, []string{"partner", "products"}, true,
		func(s *Store, _ string, q *controlRequest) (any, *Change, *opError) {
			rec, c := s.postAdjustment(q.Partner, q.Reason, q.Products)
			return rec, changed(c), nil
		}},
	{[]string{"items"}, []string{"partner", "sku", "description", "onHand"}, []string{"partner", "sku"}, true,
		func(s *Store, _ string, q *controlRequest) (any, *Change, *opError) {
			onHand := 0
			if q.OnHand != nil {
				onHand = *q.OnHand
			}
			return s.addItem(q.Partner, q.SKU, q.Description, onHand), nil, nil
		}},
	{[]string{"outage"}, []string{"seconds"}, []string{"seconds"}, false,
		func(s *Store, _ string, q *controlRequest) (any, *Change, *opError) {
			until := s.setOutage(time.Duration(*q.Seconds) * time.Second)
			return map[string]any{"seconds": *q.Seconds, "until": until.UTC().Format(time.RFC3339Nano)}, nil, nil
		}},
}

// wrap adapts an operation's typed results to a route's.
func wrap[R any](rec R, c Change, err *opError) (any, *Change, *opError) {
	if err != nil {
		return nil, nil, err
	}
	return rec, &c, nil
}

// match finds the route for segs and the id it names.
func matchControl(segs []string) (*controlRoute, string) {
	for i := range controlRoutes {
		rt := &controlRoutes[i]
		if len(rt.path) != len(segs) {
			continue
		}
		id, ok := "", true
		for j, p := range rt.path {
			if p == "{id}" {
				id = segs[j]
			} else if p != segs[j] {
				ok = false
				break
			}
		}
		if ok {
			return rt, id
		}
	}
	return nil, ""
}

// serveControl answers POST /wms/_control/... (segs without "/wms/_control").
func (h *Handler) serveControl(w http.ResponseWriter, r *http.Request, segs []string) {
	rt, id := matchControl(segs)
	if rt == nil {
		writeError(w, http.StatusNotFound, codeNoSuchResource, "no such control call")
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, allowControlPOST)
		return
	}
	var req controlRequest
	if e := decodeControl(w, r, rt, &req); e != nil {
		writeError(w, e.status, e.code, e.message)
		return
	}
	s := h.store
	s.mu.Lock()
	rec, change, opErr := rt.run(s, id, &req)
	var body []byte
	var err error
	if opErr == nil {
		body, err = json.Marshal(rec)
	}
	s.mu.Unlock()
	switch {
	case opErr != nil:
		writeError(w, opErr.status, opErr.code, opErr.message)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, codeInternal, "could not encode the record")
		return
	}
	if change != nil {
		w.Header().Set(changeIDHeader, change.ID)
		h.logger.Debug("wms simulator change", zap.String("kind", change.Kind),
			zap.String("change", change.Change), zap.String("entity", change.Entity), zap.String("id", change.ID))
	}
	status := http.StatusOK
	if rt.created {
		status = http.StatusCreated
	}
	writeJSON(w, status, body)
}

// decodeControl reads r's JSON body (at most maxControlBody; an empty body
// is an empty object) into req and validates it for rt.
func decodeControl(w http.ResponseWriter, r *http.Request, rt *controlRoute, req *controlRequest) *opError {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxControlBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &opError{http.StatusRequestEntityTooLarge, codeTooLarge,
				fmt.Sprintf("control bodies are limited to %d bytes", maxControlBody)}
		}
		return badRequest("could not read the body")
	}
	var fields map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return badRequest("the body is not a JSON object: " + err.Error())
		}
		if err := json.Unmarshal(raw, req); err != nil {
			return badRequest("malformed body: " + err.Error())
		}
	}
	for name := range fields {
		if !contains(rt.fields, name) {
			return badRequest(fmt.Sprintf("unknown field %q; this call takes %s", name, fieldList(rt.fields)))
		}
	}
	for _, name := range rt.required {
		if _, ok := fields[name]; !ok {
			return badRequest(fmt.Sprintf("missing field %q", name))
		}
		if !given[name](req) {
			return badRequest(fmt.Sprintf("field %q must not be null or empty", name))
		}
	}
	return validate(req)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func fieldList(fields []string) string {
	if len(fields) == 0 {
		return "no fields"
	}
	return `"` + strings.Join(fields, `", "`) + `"`
}

func badRequest(msg string) *opError {
	return &opError{http.StatusBadRequest, codeBadRequest, msg}
}
