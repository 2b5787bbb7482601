package feed

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// MappingConfig names the upstream feed's fields, kinds and changes. Every map
// is keyed by the canonical name (the default feed contract, which the
// simulator serves) and
// gives the name the upstream uses instead; a missing or empty entry keeps the
// canonical name.
type MappingConfig struct {
	// Fields: id, partner, kind, entity, change, status, shipment,
	// products, at.
	Fields map[string]string `json:"fields,omitempty"`
	// Kinds: outbound, shipment, label, receipt, inbound, adjustment.
	Kinds map[string]string `json:"kinds,omitempty"`
	// Changes, keyed "<kind>.<change>": outbound.created,
	// outbound.status-changed, shipment.created, shipment.dispatched,
	// label.printed, label.status-changed, receipt.received,
	// inbound.created, inbound.status-changed, adjustment.posted.
	Changes map[string]string `json:"changes,omitempty"`
	// CreatedIsStatus makes the creation of an outbound or inbound an
	// outbound-status / inbound-status event (its first status). Default
	// true; when false a "created" change is read and produces no event.
	CreatedIsStatus *bool `json:"created_is_status,omitempty"`
}

// Canonical names.
var (
	FieldNames = []string{"id", "partner", "kind", "entity", "change", "status", "shipment", "products", "at"}
	KindNames  = []string{"outbound", "shipment", "label", "receipt", "inbound", "adjustment"}
	ChangeKeys = []string{
		"outbound.created", "outbound.status-changed", "shipment.created", "shipment.dispatched",
		"label.printed", "label.status-changed", "receipt.received", "inbound.created",
		"inbound.status-changed", "adjustment.posted",
	}
)

type rule int

const (
	ruleNone               rule = iota
	ruleOutboundStatus          // outbound-status, identifier = entity
	ruleOutboundCreated         // outbound-status when CreatedIsStatus
	ruleShipmentCreated         // shipment-created, consolidation only
	ruleShipmentDispatched      // shipment-shipped, consolidation only
	ruleLabelPrinted            // shipment-shipped for the label's shipment, non-consolidation only
	ruleLabelStatus             // label-status
	ruleReceiptReceived         // receipt-received
	ruleInboundCreated          // inbound-status when CreatedIsStatus
	ruleInboundStatus           // inbound-status
	ruleAdjustmentPosted        // adjustment-posted per product
)

var ruleOfKey = map[string]rule{
	"outbound.created": ruleOutboundCreated, "outbound.status-changed": ruleOutboundStatus,
	"shipment.created": ruleShipmentCreated, "shipment.dispatched": ruleShipmentDispatched,
	"label.printed": ruleLabelPrinted, "label.status-changed": ruleLabelStatus,
	"receipt.received": ruleReceiptReceived, "inbound.created": ruleInboundCreated,
	"inbound.status-changed": ruleInboundStatus, "adjustment.posted": ruleAdjustmentPosted,
}

type fieldNames struct {
	ID, Partner, Kind, Entity, Change, Status, Shipment, Products, At string
}

// Mapping turns changes into events. Build it with NewMapping.
type Mapping struct {
	fields          fieldNames
	kinds           map[string]bool            // upstream kind names
	rules           map[string]map[string]rule // upstream kind → upstream change → rule
	createdIsStatus bool
}

// NewMapping validates cfg and compiles it. A nil cfg gives the defaults.
func NewMapping(cfg *MappingConfig) (*Mapping, error) {
	if cfg == nil {
		cfg = &MappingConfig{}
	}
	if err := checkKeys("field", cfg.Fields, FieldNames); err != nil {
		return nil, err
	}
	if err := checkKeys("kind", cfg.Kinds, KindNames); err != nil {
		return nil, err
	}
	if err := checkKeys("change", cfg.Changes, ChangeKeys); err != nil {
		return nil, err
	}
	name := func(m map[string]string, k string) string {
		if v := m[k]; v != "" {
			return v
		}
		return k
	}
	f := cfg.Fields
	m := &Mapping{
		fields: fieldNames{
			ID: name(f, "id"), Partner: name(f, "partner"), Kind: name(f, "kind"),
			Entity: name(f, "entity"), Change: name(f, "change"), Status: name(f, "status"),
			Shipment: name(f, "shipment"), Products: name(f, "products"), At: name(f, "at"),
		},
		kinds:           map[string]bool{},
		rules:           map[string]map[string]rule{},
		createdIsStatus: cfg.CreatedIsStatus == nil || *cfg.CreatedIsStatus,
	}
	seenField := map[string]string{}
	for _, k := range FieldNames {
		n := name(f, k)
		if other, dup := seenField[n]; dup {
			return nil, fmt.Errorf("fields %s and %s are both read from %q", other, k, n)
		}
		seenField[n] = k
	}
	for _, k := range KindNames {
		up := name(cfg.Kinds, k)
		if m.kinds[up] {
			return nil, fmt.Errorf("two kinds are both named %q upstream", up)
		}
		m.kinds[up] = true
		m.rules[up] = map[string]rule{}
	}
	for _, key := range ChangeKeys {
		kind, up, _ := strings.Cut(key, ".") // default: the part after the kind
		if v := cfg.Changes[key]; v != "" {
			up = v
		}
		byChange := m.rules[name(cfg.Kinds, kind)]
		if _, dup := byChange[up]; dup {
			return nil, fmt.Errorf("change %q of kind %s is mapped twice", up, kind)
		}
		byChange[up] = ruleOfKey[key]
	}
	return m, nil
}

func checkKeys(what string, m map[string]string, valid []string) error {
	var bad []string
	for k := range m {
		if !contains(valid, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("unknown %s name %q (known: %s)", what, bad[0], strings.Join(valid, ", "))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Check returns why c cannot be turned into events whatever its partner's
// kind ("" when it can): a decoding problem, a missing id, partner, kind or
// entity, an unknown kind or change.
func (m *Mapping) Check(c Change) string {
	switch {
	case c.Invalid != "":
		return c.Invalid
	case c.ID == "":
		return "missing change id"
	case len(c.ID) > maxIDLen:
		return fmt.Sprintf("change id longer than %d bytes", maxIDLen)
	case c.Partner == "":
		return "missing partner"
	case c.Kind == "":
		return "missing kind"
	case !m.kinds[c.Kind]:
		return fmt.Sprintf("unknown kind %q", c.Kind)
	case c.Entity == "":
		return "missing entity"
	}
	if _, ok := m.rules[c.Kind][c.Change]; !ok {
		return fmt.Sprintf("unknown change %q for kind %q", c.Change, c.Kind)
	}
	return ""
}

// Map returns the events of change c for a partner of the given kind, or a
// non-empty reason why the change is rejected. A valid change may produce no
// event (a shipment created for a non-consolidation partner).
//
// Identifiers: the entity's id; for a printed label, the label's shipment id;
// for an adjustment, "<adjustment id>:<product>" (the id of that product's
// adjustment line), one event per distinct product in the order given.
func (m *Mapping) Map(c Change, consolidation bool) (events []webhooks.Event, reason string) {
	if reason := m.Check(c); reason != "" {
		return nil, reason
	}
	r := m.rules[c.Kind][c.Change]
	one := func(name, id string) []webhooks.Event {
		return []webhooks.Event{{Name: name, Identifier: id}}
	}
	switch r {
	case ruleOutboundStatus:
		return one(webhooks.EventOutboundStatus, c.Entity), ""
	case ruleOutboundCreated:
		if m.createdIsStatus {
			return one(webhooks.EventOutboundStatus, c.Entity), ""
		}
	case ruleInboundStatus:
		return one(webhooks.EventInboundStatus, c.Entity), ""
	case ruleInboundCreated:
		if m.createdIsStatus {
			return one(webhooks.EventInboundStatus, c.Entity), ""
		}
	case ruleShipmentCreated:
		if consolidation {
			return one(webhooks.EventShipmentCreated, c.Entity), ""
		}
	case ruleShipmentDispatched:
		if consolidation {
			return one(webhooks.EventShipmentShipped, c.Entity), ""
		}
	case ruleLabelPrinted:
		if c.Shipment == "" {
			return nil, "label printed without its shipment"
		}
		if !consolidation {
			return one(webhooks.EventShipmentShipped, c.Shipment), ""
		}
	case ruleLabelStatus:
		return one(webhooks.EventLabelStatus, c.Entity), ""
	case ruleReceiptReceived:
		return one(webhooks.EventReceiptReceived, c.Entity), ""
	case ruleAdjustmentPosted:
		if len(c.Products) == 0 {
			return nil, "adjustment posted without products"
		}
		seen := make(map[string]bool, len(c.Products))
		for _, p := range c.Products {
			if p == "" {
				return nil, "adjustment with an empty product id"
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			events = append(events, webhooks.Event{Name: webhooks.EventAdjustmentPosted, Identifier: c.Entity + ":" + p})
		}
		return events, ""
	}
	return nil, ""
}
