package wmssim

// The records of the simulated warehouse, as its JSON resources show them.
// Every record belongs to one partner; children (shipments, labels,
// receipts) belong to their parent's partner. Times are RFC 3339 in UTC.

// StatusChange is one entry of a record's status history.
type StatusChange struct {
	Status string `json:"status"`
	At     string `json:"at"`
}

// Item is a product ("item" in the warehouse's own words).
type Item struct {
	ID          string `json:"id"`
	Partner     string `json:"partner"`
	SKU         string `json:"sku"`
	Description string `json:"description"`
	UOM         string `json:"uom"`
	OnHand      int    `json:"onHand"`
	Status      string `json:"status"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

// Outbound is an outbound order: created → picking → packed → shipped
// (other statuses are accepted and recorded).
type Outbound struct {
	ID        string         `json:"id"`
	Partner   string         `json:"partner"`
	OrderRef  string         `json:"orderRef"`
	Status    string         `json:"status"`
	Shipments []string       `json:"shipments"`
	History   []StatusChange `json:"history"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
}

// Shipment is a package of an outbound: created, then dispatched.
type Shipment struct {
	ID           string   `json:"id"`
	Partner      string   `json:"partner"`
	Outbound     string   `json:"outbound"`
	Carrier      string   `json:"carrier"`
	Status       string   `json:"status"`
	Labels       []string `json:"labels"`
	CreatedAt    string   `json:"createdAt"`
	DispatchedAt string   `json:"dispatchedAt,omitempty"`
}

// Label is a carrier label of a shipment: printed → in-transit → delivered
// (other statuses are accepted and recorded).
type Label struct {
	ID             string         `json:"id"`
	Partner        string         `json:"partner"`
	Shipment       string         `json:"shipment"`
	TrackingNumber string         `json:"trackingNumber"`
	Status         string         `json:"status"`
	History        []StatusChange `json:"history"`
	CreatedAt      string         `json:"createdAt"`
	UpdatedAt      string         `json:"updatedAt"`
}

// Inbound is an inbound order: announced → arrived → received (other
// statuses are accepted and recorded).
type Inbound struct {
	ID        string         `json:"id"`
	Partner   string         `json:"partner"`
	ASN       string         `json:"asn"`
	Status    string         `json:"status"`
	Receipts  []string       `json:"receipts"`
	History   []StatusChange `json:"history"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
}

// Receipt records goods received for an inbound.
type Receipt struct {
	ID         string   `json:"id"`
	Partner    string   `json:"partner"`
	Inbound    string   `json:"inbound"`
	Status     string   `json:"status"`
	Products   []string `json:"products"`
	ReceivedAt string   `json:"receivedAt"`
}

// AdjustmentLine is the correction of one product within an adjustment.
type AdjustmentLine struct {
	ID      string `json:"id"`
	Product string `json:"product"`
}

// Adjustment is a stock adjustment (for instance after a count) of one or
// more products.
type Adjustment struct {
	ID       string           `json:"id"`
	Partner  string           `json:"partner"`
	Reason   string           `json:"reason"`
	Status   string           `json:"status"`
	Products []string         `json:"products"`
	Lines    []AdjustmentLine `json:"lines"`
	PostedAt string           `json:"postedAt"`
}

func (r *Item) owner() string       { return r.Partner }
func (r *Item) state() string       { return r.Status }
func (r *Outbound) owner() string   { return r.Partner }
func (r *Outbound) state() string   { return r.Status }
func (r *Shipment) owner() string   { return r.Partner }
func (r *Shipment) state() string   { return r.Status }
func (r *Label) owner() string      { return r.Partner }
func (r *Label) state() string      { return r.Status }
func (r *Inbound) owner() string    { return r.Partner }
func (r *Inbound) state() string    { return r.Status }
func (r *Receipt) owner() string    { return r.Partner }
func (r *Receipt) state() string    { return r.Status }
func (r *Adjustment) owner() string { return r.Partner }
func (r *Adjustment) state() string { return r.Status }
