package wmssim

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Paging of the change feed: ?limit=N.
const (
	defaultFeedLimit = 100
	maxFeedLimit     = 1000
)

// Change is one entry of the change feed, in the default feed contract
// (GET {feed}?after={cursor}&limit={n}). Every field is
// always present; shipment is set for shipment and label changes, products
// for adjustments. Outbound and Inbound are the simulator's additions naming
// the parent of a shipment or receipt.
type Change struct {
	ID       string   `json:"id"`
	Partner  string   `json:"partner"`
	Kind     string   `json:"kind"`
	Entity   string   `json:"entity"`
	Change   string   `json:"change"`
	Status   string   `json:"status"`
	Shipment string   `json:"shipment"`
	Products []string `json:"products"`
	At       string   `json:"at"`
	Outbound string   `json:"outbound,omitempty"`
	Inbound  string   `json:"inbound,omitempty"`

	seq uint64
}

// feedPage is the answer of GET /wms/changes.
type feedPage struct {
	Changes []Change `json:"changes"`
	Next    string   `json:"next"`
}

// appendChange gives c the next sequence number (its id, and the cursor that
// follows it) and, unless the caller set one, the current time, and appends
// it. Callers hold mu. When the
// log holds an eighth more than maxChanges, the oldest are dropped so that
// maxChanges remain; dropping in steps keeps appends amortised O(1).
func (s *Store) appendChange(c Change) Change {
	s.lastSeq++
	c.seq = s.lastSeq
	c.ID = strconv.FormatUint(c.seq, 10)
	if c.At == "" {
		c.At = s.stamp()
	}
	if c.Products == nil {
		c.Products = []string{}
	}
	s.changes = append(s.changes, c)
	if len(s.changes) > s.maxChanges+s.maxChanges/8 {
		kept := make([]Change, s.maxChanges, s.maxChanges+s.maxChanges/8+1)
		copy(kept, s.changes[len(s.changes)-s.maxChanges:])
		s.changes = kept
	}
	return c
}

// parseCursor reads the feed cursor: "" or "0" for the beginning, otherwise
// the canonical decimal sequence number of a change already issued.
func parseCursor(v string, lastSeq uint64) (uint64, bool) {
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != v || n > lastSeq {
		return 0, false
	}
	return n, true
}

// changesAfter returns up to limit changes following cursor, the next cursor
// and how many changes between cursor and the oldest kept one were dropped.
// Callers hold mu.
func (s *Store) changesAfter(cursor uint64, limit int) (page []Change, next uint64, skipped uint64) {
	next = cursor
	if len(s.changes) == 0 {
		return []Change{}, next, 0
	}
	if cursor < s.baseSeq {
		cursor = s.baseSeq // a cursor of an earlier run: read this run from its start
	}
	first := s.changes[0].seq
	if cursor+1 < first {
		skipped = first - cursor - 1
		cursor = first - 1
	}
	start := int(cursor + 1 - first)
	if start >= len(s.changes) {
		return []Change{}, next, skipped
	}
	end := min(start+limit, len(s.changes))
	page = append([]Change(nil), s.changes[start:end]...)
	return page, page[len(page)-1].seq, skipped
}

// serveChanges answers GET /wms/changes?after={cursor}&limit={n}.
func (h *Handler) serveChanges(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	q := r.URL.Query()
	limit := defaultFeedLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxFeedLimit {
			writeError(w, http.StatusBadRequest, codeBadRequest,
				"limit must be a whole number from 1 to "+strconv.Itoa(maxFeedLimit))
			return
		}
		limit = n
	}
	s := h.store
	s.mu.Lock()
	cursor, ok := parseCursor(q.Get("after"), s.lastSeq)
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, codeBadCursor, "after is not a cursor this feed issued")
		return
	}
	page, next, skipped := s.changesAfter(cursor, limit)
	s.mu.Unlock()
	body, err := json.Marshal(feedPage{Changes: page, Next: strconv.FormatUint(next, 10)})
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, "could not encode the feed")
		return
	}
	if skipped > 0 {
		w.Header().Set("X-WMS-Skipped-Changes", strconv.FormatUint(skipped, 10))
	}
	writeJSON(w, http.StatusOK, body)
}
