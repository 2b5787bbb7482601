// Package webhooks holds the gateway's webhook domain: event names and
// payloads, the signer, subscriptions, the durable queue and dispatcher, the
// retry policy and dead letters. It keeps its state through Storage (a
// backend in storage/) and imports neither Caddy nor a database driver.
package webhooks

import (
	"strings"
	"unicode/utf8"
)

// The seven event names a partner can subscribe to (the interface's "event"
// field).
const (
	EventOutboundStatus   = "outbound-status"
	EventShipmentCreated  = "shipment-created"
	EventShipmentShipped  = "shipment-shipped"
	EventReceiptReceived  = "receipt-received"
	EventInboundStatus    = "inbound-status"
	EventAdjustmentPosted = "adjustment-posted"
	EventLabelStatus      = "label-status"
)

// payloadKinds gives the payload type and resource of each event name
// (decisions §5).
var payloadKinds = map[string]struct{ Type, Resource string }{
	EventOutboundStatus:   {"outbound.status-changed", "outbound"},
	EventShipmentCreated:  {"shipment.created", "shipment"},
	EventShipmentShipped:  {"shipment.shipped", "shipment"},
	EventReceiptReceived:  {"receipt.received", "receipt"},
	EventInboundStatus:    {"inbound.status-changed", "inbound"},
	EventAdjustmentPosted: {"adjustment.posted", "adjustment"},
	EventLabelStatus:      {"label.status-changed", "label"},
}

// EventNames lists the event names in the interface's order.
var EventNames = []string{
	EventOutboundStatus, EventShipmentCreated, EventShipmentShipped,
	EventReceiptReceived, EventInboundStatus, EventAdjustmentPosted,
	EventLabelStatus,
}

// ValidEvent reports whether name is one of the seven event names.
func ValidEvent(name string) bool {
	_, ok := payloadKinds[name]
	return ok
}

// Event is something that happened to one resource of one partner.
type Event struct {
	Name       string `json:"event"`      // one of EventNames
	Identifier string `json:"identifier"` // the resource's id
}

// Payload is the webhook body (the interface's type, resource, identifier).
type Payload struct {
	Type       string `json:"type"`
	Resource   string `json:"resource"`
	Identifier string `json:"identifier"`
}

// Payload returns the webhook payload of e. The zero Payload is returned for
// an unknown event name; callers validate names with ValidEvent first.
func (e Event) Payload() Payload {
	k := payloadKinds[e.Name]
	return Payload{Type: k.Type, Resource: k.Resource, Identifier: e.Identifier}
}

// Body returns the exact bytes that are sent and signed: compact JSON with
// the keys in the order type, resource, identifier, UTF-8, no HTML escaping.
// Strings are escaped exactly as JavaScript's JSON.stringify and Python's
// json.dumps(..., separators=(",", ":"), ensure_ascii=False) escape them, so a
// receiver that re-serialises the parsed body gets these bytes back and the
// same signature. Invalid UTF-8 is replaced by U+FFFD first.
func (p Payload) Body() []byte {
	b := make([]byte, 0, 48+len(p.Type)+len(p.Resource)+len(p.Identifier))
	b = append(b, `{"type":`...)
	b = appendJSONString(b, p.Type)
	b = append(b, `,"resource":`...)
	b = appendJSONString(b, p.Resource)
	b = append(b, `,"identifier":`...)
	b = appendJSONString(b, p.Identifier)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way JSON.stringify writes
// it: short escapes for \b \f \n \r \t " \, \u00xx (lower-case hex) for the
// other control characters, everything else literal.
func appendJSONString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
