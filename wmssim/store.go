package wmssim

import (
	"fmt"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// Bounds of the in-memory state. The change log keeps at least the newest
// defaultMaxChanges changes; once it holds an eighth more than that, the
// oldest are dropped in one step (see Store.appendChange). A reader whose
// cursor points before the oldest kept change resumes at the oldest kept
// change and is told how many it missed (header X-WMS-Skipped-Changes).
const (
	defaultMaxChanges  = 100_000
	defaultMaxRequests = 100
)

// Store is one simulated warehouse: its records, change log, request log and
// outage switch. All access goes through mu. A Store lives in the package's
// usage pool under its name, so config reloads that keep a simulator with
// the same name keep the same warehouse.
type Store struct {
	mu  sync.Mutex
	now func() time.Time

	items       *table[*Item]
	outbounds   *table[*Outbound]
	shipments   *table[*Shipment]
	labels      *table[*Label]
	inbounds    *table[*Inbound]
	receipts    *table[*Receipt]
	adjustments *table[*Adjustment]

	changes    []Change // contiguous sequence numbers, oldest first
	lastSeq    uint64   // sequence number of the newest change ever appended
	baseSeq    uint64   // lastSeq when this warehouse started; see startSeq
	maxChanges int

	requests    []RequestRecord // newest last
	maxRequests int

	outageUntil time.Time
}

// newStore returns an empty warehouse; seed adds the demo items.
func newStore(now func() time.Time, seed bool) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{
		now:         now,
		items:       newTable[*Item]("ITM"),
		outbounds:   newTable[*Outbound]("OB"),
		shipments:   newTable[*Shipment]("SHP"),
		labels:      newTable[*Label]("LBL"),
		inbounds:    newTable[*Inbound]("IB"),
		receipts:    newTable[*Receipt]("RCP"),
		adjustments: newTable[*Adjustment]("ADJ"),
		maxChanges:  defaultMaxChanges,
		maxRequests: defaultMaxRequests,
	}
	if seed {
		s.seed()
	}
	return s
}

// Destruct lets the Store live in a caddy.UsagePool; memory only, nothing to
// release.
func (s *Store) Destruct() error { return nil }

// demoItems are the products the demo partners see in GET /wms/items.
var demoItems = []struct{ partner, sku, description string }{
	{"partner-acme", "ACME-ANVIL-25", "Anvil, 25 kg"},
	{"partner-acme", "ACME-ROCKET-SK", "Rocket skates, pair"},
	{"partner-acme", "ACME-TNT-12", "Dynamite, box of 12"},
	{"partner-globex", "GLX-HAMMOCK", "Hammock, outdoor"},
	{"partner-globex", "GLX-DOOMSDAY", "Doomsday device, small"},
}

func (s *Store) seed() {
	for i, d := range demoItems {
		s.addItem(d.partner, d.sku, d.description, 10*(i+1))
	}
}

// addItem stores a product; callers hold mu (or own s exclusively).
func (s *Store) addItem(partner, sku, description string, onHand int) *Item {
	at := s.stamp()
	it := &Item{Partner: partner, SKU: sku, Description: description, UOM: "EA",
		OnHand: onHand, Status: "active", CreatedAt: at, UpdatedAt: at}
	it.ID = s.items.add(it)
	return it
}

// stamp is the store's current time as the records and changes show it.
func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339Nano) }

// record is what every table row offers for listing and isolation.
type record interface {
	owner() string
	state() string
}

// table holds the records of one resource in creation order under ids made of
// a prefix and a zero-padded counter (OB-000001), as the old system does.
type table[R record] struct {
	prefix string
	next   int
	order  []R
	byID   map[string]R
}

func newTable[R record](prefix string) *table[R] {
	return &table[R]{prefix: prefix, byID: map[string]R{}}
}

// add assigns the next id to rec and stores it; it returns the id.
func (t *table[R]) add(rec R) string {
	t.next++
	id := fmt.Sprintf("%s-%06d", t.prefix, t.next)
	t.order = append(t.order, rec)
	t.byID[id] = rec
	return id
}

func (t *table[R]) get(id string) (R, bool) {
	r, ok := t.byID[id]
	return r, ok
}

// pool keeps one Store per simulator name for as long as a loaded config uses
// it, so a reload (which provisions the new config before cleaning up the old)
// keeps the warehouse.
var pool = caddy.NewUsagePool()

// loadStore returns the named store, creating (and seeding) it when no loaded
// config holds it. Every call must be matched by releaseStore.
func loadStore(name string, seed bool) (*Store, error) {
	v, _, err := pool.LoadOrNew(name, func() (caddy.Destructor, error) {
		s := newStore(time.Now, seed)
		s.baseSeq = startSeq(time.Now())
		s.lastSeq = s.baseSeq
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Store), nil
}

// startSeq is where a new warehouse starts numbering its changes: the start
// time in Unix microseconds. A real WMS never reuses a change id; starting
// each run above the previous run's ids keeps the simulator honest about that
// across restarts of the demo, so a gateway that kept its cursor and its
// "already seen" change ids in its data dir goes on reading without a reset
// (a cursor from an earlier run reads from the start of this run).
func startSeq(now time.Time) uint64 { return uint64(now.UnixMicro()) }

// releaseStore drops one reference; the last one frees the warehouse.
func releaseStore(name string) error {
	_, err := pool.Delete(name)
	return err
}
