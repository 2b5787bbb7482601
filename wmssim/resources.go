package wmssim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Paging of resource lists: ?page=N (from 1) and ?page_size=M.
const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// partnerHeader carries the calling partner's id (set by the gateway). When
// present, lists show only that partner's records and another partner's
// record answers 404.
const partnerHeader = "X-Partner-Id"

// resourceNames are the collections under /wms (and /wms/classic).
var resourceNames = []string{
	"shipments", "items", "outbound-orders", "inbound-orders",
	"receipts", "stock-adjustments", "labels",
}

// resource reads one collection of a store; callers hold the store's mu.
type resource struct {
	list func(s *Store, f listFilter) ([]byte, error)
	get  func(s *Store, id, partner string, isolated bool) (any, bool)
}

var resources = map[string]resource{
	"shipments":         resourceOf(func(s *Store) *table[*Shipment] { return s.shipments }),
	"items":             resourceOf(func(s *Store) *table[*Item] { return s.items }),
	"outbound-orders":   resourceOf(func(s *Store) *table[*Outbound] { return s.outbounds }),
	"inbound-orders":    resourceOf(func(s *Store) *table[*Inbound] { return s.inbounds }),
	"receipts":          resourceOf(func(s *Store) *table[*Receipt] { return s.receipts }),
	"stock-adjustments": resourceOf(func(s *Store) *table[*Adjustment] { return s.adjustments }),
	"labels":            resourceOf(func(s *Store) *table[*Label] { return s.labels }),
}

// listFilter selects a page of a collection: only partner's records when
// isolated, only those with status when it is not empty.
type listFilter struct {
	partner, status string
	isolated        bool
	page, size      int
}

// listPage is the answer to a list request.
type listPage struct {
	Items    any `json:"items"`
	Page     int `json:"page"`
	PageSize int `json:"page_size"`
	Total    int `json:"total"`
}

func resourceOf[R record](pick func(*Store) *table[R]) resource {
	return resource{
		list: func(s *Store, f listFilter) ([]byte, error) {
			var match []R
			for _, rec := range pick(s).order {
				if (!f.isolated || rec.owner() == f.partner) && (f.status == "" || rec.state() == f.status) {
					match = append(match, rec)
				}
			}
			items := []R{}
			if start := (f.page - 1) * f.size; start < len(match) {
				items = match[start:min(start+f.size, len(match))]
			}
			return json.Marshal(listPage{Items: items, Page: f.page, PageSize: f.size, Total: len(match)})
		},
		get: func(s *Store, id, partner string, isolated bool) (any, bool) {
			rec, ok := pick(s).get(id)
			if !ok || (isolated && rec.owner() != partner) {
				return nil, false
			}
			return rec, true
		},
	}
}

// serveResource answers GET /wms/<resource>[/<id>] (segs without "/wms" and
// "classic").
func (h *Handler) serveResource(w http.ResponseWriter, r *http.Request, segs []string) {
	if len(segs) == 0 || len(segs) > 2 {
		writeError(w, http.StatusNotFound, codeNoSuchResource, "no such resource")
		return
	}
	res, ok := resources[segs[0]]
	if !ok {
		writeError(w, http.StatusNotFound, codeNoSuchResource, "no such resource: "+segs[0])
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	// A present header isolates, even when empty (then nothing matches).
	partnerVals, isolated := r.Header[partnerHeader]
	partner := ""
	if isolated && len(partnerVals) > 0 {
		partner = partnerVals[0]
	}
	if len(segs) == 2 {
		h.store.mu.Lock()
		rec, found := res.get(h.store, segs[1], partner, isolated)
		var body []byte
		var err error
		if found {
			body, err = json.Marshal(rec)
		}
		h.store.mu.Unlock()
		switch {
		case !found:
			writeError(w, http.StatusNotFound, codeNotFound, segs[0]+" "+strconv.Quote(segs[1])+" not found")
		case err != nil:
			writeError(w, http.StatusInternalServerError, codeInternal, "could not encode the record")
		default:
			writeJSON(w, http.StatusOK, body)
		}
		return
	}
	f, msg := parseListFilter(r.URL.Query())
	if msg != "" {
		writeError(w, http.StatusBadRequest, codeBadRequest, msg)
		return
	}
	f.partner, f.isolated = partner, isolated
	h.store.mu.Lock()
	body, err := res.list(h.store, f)
	h.store.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, "could not encode the list")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// parseListFilter reads page, page_size and status; msg explains bad input.
func parseListFilter(q url.Values) (f listFilter, msg string) {
	f.page, f.size = 1, defaultPageSize
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return f, "page must be a whole number from 1 to 1000000"
		}
		f.page = n
	}
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return f, "page_size must be a whole number from 1 to " + strconv.Itoa(maxPageSize)
		}
		f.size = n
	}
	f.status = q.Get("status")
	return f, ""
}
