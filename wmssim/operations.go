package wmssim

import (
	"fmt"
	"net/http"
	"time"
)

// The warehouse's operations, as the control surface drives them. Each one
// changes the records and appends exactly one change to the feed (creating
// an item appends none: the feed has no kind for items). Callers hold mu and
// have validated the input's shape; these check only that ids exist.

// opError is a refusal of an operation, answered in the old system's format.
type opError struct {
	status        int
	code, message string
}

func notFound(what, id string) *opError {
	return &opError{http.StatusNotFound, codeNotFound, fmt.Sprintf("%s %q not found", what, id)}
}

func (s *Store) createOutbound(partner, orderRef string) (*Outbound, Change) {
	at := s.stamp()
	ob := &Outbound{Partner: partner, OrderRef: orderRef, Status: "created", Shipments: []string{},
		History: []StatusChange{{"created", at}}, CreatedAt: at, UpdatedAt: at}
	ob.ID = s.outbounds.add(ob)
	if ob.OrderRef == "" {
		ob.OrderRef = "SO-" + ob.ID
	}
	return ob, s.appendChange(Change{Partner: partner, Kind: "outbound", Entity: ob.ID,
		Change: "created", Status: ob.Status, At: at})
}

func (s *Store) setOutboundStatus(id, status string) (*Outbound, Change, *opError) {
	ob, ok := s.outbounds.get(id)
	if !ok {
		return nil, Change{}, notFound("outbound", id)
	}
	ob.UpdatedAt = s.stamp()
	ob.Status = status
	ob.History = append(ob.History, StatusChange{status, ob.UpdatedAt})
	return ob, s.appendChange(Change{Partner: ob.Partner, Kind: "outbound", Entity: id,
		Change: "status-changed", Status: status, At: ob.UpdatedAt}), nil
}

func (s *Store) createShipment(outboundID, carrier string) (*Shipment, Change, *opError) {
	ob, ok := s.outbounds.get(outboundID)
	if !ok {
		return nil, Change{}, notFound("outbound", outboundID)
	}
	if carrier == "" {
		carrier = "POSTNORD"
	}
	sh := &Shipment{Partner: ob.Partner, Outbound: ob.ID, Carrier: carrier, Status: "created",
		Labels: []string{}, CreatedAt: s.stamp()}
	sh.ID = s.shipments.add(sh)
	ob.Shipments = append(ob.Shipments, sh.ID)
	return sh, s.appendChange(Change{Partner: sh.Partner, Kind: "shipment", Entity: sh.ID,
		Change: "created", Status: sh.Status, Shipment: sh.ID, Outbound: ob.ID, At: sh.CreatedAt}), nil
}

func (s *Store) printLabel(shipmentID, tracking string) (*Label, Change, *opError) {
	sh, ok := s.shipments.get(shipmentID)
	if !ok {
		return nil, Change{}, notFound("shipment", shipmentID)
	}
	at := s.stamp()
	lb := &Label{Partner: sh.Partner, Shipment: sh.ID, TrackingNumber: tracking, Status: "printed",
		History: []StatusChange{{"printed", at}}, CreatedAt: at, UpdatedAt: at}
	lb.ID = s.labels.add(lb)
	if lb.TrackingNumber == "" {
		lb.TrackingNumber = fmt.Sprintf("00370%09d", s.labels.next)
	}
	sh.Labels = append(sh.Labels, lb.ID)
	return lb, s.appendChange(Change{Partner: lb.Partner, Kind: "label", Entity: lb.ID,
		Change: "printed", Status: lb.Status, Shipment: sh.ID, Outbound: sh.Outbound, At: at}), nil
}

func (s *Store) dispatchShipment(id string) (*Shipment, Change, *opError) {
	sh, ok := s.shipments.get(id)
	if !ok {
		return nil, Change{}, notFound("shipment", id)
	}
	if sh.Status == "dispatched" {
		return nil, Change{}, &opError{http.StatusConflict, codeConflict,
			fmt.Sprintf("shipment %q was already dispatched at %s", id, sh.DispatchedAt)}
	}
	sh.Status = "dispatched"
	sh.DispatchedAt = s.stamp()
	return sh, s.appendChange(Change{Partner: sh.Partner, Kind: "shipment", Entity: id,
		Change: "dispatched", Status: sh.Status, Shipment: id, Outbound: sh.Outbound, At: sh.DispatchedAt}), nil
}

func (s *Store) setLabelStatus(id, status string) (*Label, Change, *opError) {
	lb, ok := s.labels.get(id)
	if !ok {
		return nil, Change{}, notFound("label", id)
	}
	lb.UpdatedAt = s.stamp()
	lb.Status = status
	lb.History = append(lb.History, StatusChange{status, lb.UpdatedAt})
	return lb, s.appendChange(Change{Partner: lb.Partner, Kind: "label", Entity: id,
		Change: "status-changed", Status: status, Shipment: lb.Shipment, At: lb.UpdatedAt}), nil
}

func (s *Store) createInbound(partner, asn string) (*Inbound, Change) {
	at := s.stamp()
	ib := &Inbound{Partner: partner, ASN: asn, Status: "announced", Receipts: []string{},
		History: []StatusChange{{"announced", at}}, CreatedAt: at, UpdatedAt: at}
	ib.ID = s.inbounds.add(ib)
	if ib.ASN == "" {
		ib.ASN = "ASN-" + ib.ID
	}
	return ib, s.appendChange(Change{Partner: partner, Kind: "inbound", Entity: ib.ID,
		Change: "created", Status: ib.Status, At: at})
}

func (s *Store) setInboundStatus(id, status string) (*Inbound, Change, *opError) {
	ib, ok := s.inbounds.get(id)
	if !ok {
		return nil, Change{}, notFound("inbound", id)
	}
	ib.UpdatedAt = s.stamp()
	ib.Status = status
	ib.History = append(ib.History, StatusChange{status, ib.UpdatedAt})
	return ib, s.appendChange(Change{Partner: ib.Partner, Kind: "inbound", Entity: id,
		Change: "status-changed", Status: status, At: ib.UpdatedAt}), nil
}

func (s *Store) receive(inboundID string, products []string) (*Receipt, Change, *opError) {
	ib, ok := s.inbounds.get(inboundID)
	if !ok {
		return nil, Change{}, notFound("inbound", inboundID)
	}
	if products == nil {
		products = []string{}
	}
	rc := &Receipt{Partner: ib.Partner, Inbound: ib.ID, Status: "received", Products: products,
		ReceivedAt: s.stamp()}
	rc.ID = s.receipts.add(rc)
	ib.Receipts = append(ib.Receipts, rc.ID)
	return rc, s.appendChange(Change{Partner: rc.Partner, Kind: "receipt", Entity: rc.ID,
		Change: "received", Status: rc.Status, Products: products, Inbound: ib.ID, At: rc.ReceivedAt}), nil
}

func (s *Store) postAdjustment(partner, reason string, products []string) (*Adjustment, Change) {
	if reason == "" {
		reason = "cycle-count"
	}
	adj := &Adjustment{Partner: partner, Reason: reason, Status: "posted", Products: products,
		Lines: make([]AdjustmentLine, 0, len(products)), PostedAt: s.stamp()}
	adj.ID = s.adjustments.add(adj)
	for i, p := range products {
		adj.Lines = append(adj.Lines, AdjustmentLine{ID: fmt.Sprintf("%s-%d", adj.ID, i+1), Product: p})
	}
	return adj, s.appendChange(Change{Partner: partner, Kind: "adjustment", Entity: adj.ID,
		Change: "posted", Status: adj.Status, Products: products, At: adj.PostedAt})
}

// setOutage makes every non-control path answer 503 for d (0 ends it).
func (s *Store) setOutage(d time.Duration) time.Time {
	s.outageUntil = s.now().Add(d)
	return s.outageUntil
}

// outageLeft is how long the outage still lasts (0 or less: none).
func (s *Store) outageLeft() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outageUntil.IsZero() {
		return 0
	}
	return s.outageUntil.Sub(s.now())
}
