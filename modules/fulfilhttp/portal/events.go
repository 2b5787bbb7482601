package portal

import (
	"encoding/json"
	"net/http"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// catalogueEvent is one event of the catalogue, as it applies to the
// session's partner.
type catalogueEvent struct {
	Name, Type, Resource string
	When                 string // when it fires for this partner
	Fires                bool   // false: never for this partner's kind
	Example              string // an example payload, indented for reading
}

type eventsData struct {
	Consolidation bool
	Events        []catalogueEvent
	Snippets      []docs.Snippet
	TokenURL      string
	APIBase       string
}

// exampleIDs are the example payloads' identifiers.
var exampleIDs = map[string]string{
	webhooks.EventOutboundStatus:   "OUT-100234",
	webhooks.EventShipmentCreated:  "SHP-77812",
	webhooks.EventShipmentShipped:  "SHP-77812",
	webhooks.EventReceiptReceived:  "RCP-5531",
	webhooks.EventInboundStatus:    "INB-2207",
	webhooks.EventAdjustmentPosted: "ADJ-90211:SKU-1001",
	webhooks.EventLabelStatus:      "LBL-448120",
}

// whenFires says when an event fires for a consolidation partner or not,
// and whether it fires at all.
func whenFires(name string, consolidation bool) (string, bool) {
	switch name {
	case webhooks.EventOutboundStatus:
		return "One of your outbounds was created or its status changed.", true
	case webhooks.EventShipmentCreated:
		if consolidation {
			return "The warehouse created a shipment for one of your outbounds: items are packed and labelled, and stock is consumed, but the package may not have left yet.", true
		}
		return "Never for your account: as a non-consolidation partner you get shipment-shipped directly, when the label is printed.", false
	case webhooks.EventShipmentShipped:
		if consolidation {
			return "The package of one of your shipments was dispatched from the warehouse.", true
		}
		return "The label of one of your shipments was printed: for your account this is when items leave the warehouse.", true
	case webhooks.EventReceiptReceived:
		return "Products were received for one of your inbounds.", true
	case webhooks.EventInboundStatus:
		return "One of your inbounds was created or its status changed.", true
	case webhooks.EventAdjustmentPosted:
		return "Stock of one of your products was corrected (for instance after a count): once per corrected product; the identifier is the adjustment's id and the product's.", true
	case webhooks.EventLabelStatus:
		return "The status of the shipment of one of your labels changed.", true
	}
	return "", false
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	snippets, err := docs.VerificationSnippets()
	if err != nil {
		return err
	}
	tokenURL := h.tokenURL(r)
	d := eventsData{Consolidation: pc.Partner.Consolidation, Snippets: snippets, TokenURL: tokenURL, APIBase: apiBase(tokenURL)}
	for _, name := range webhooks.EventNames {
		p := webhooks.Event{Name: name, Identifier: exampleIDs[name]}.Payload()
		when, fires := whenFires(name, pc.Partner.Consolidation)
		example, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		d.Events = append(d.Events, catalogueEvent{Name: name, Type: p.Type, Resource: p.Resource, When: when,
			Fires: fires, Example: string(example)})
	}
	return pc.render(w, http.StatusOK, "events", d)
}
