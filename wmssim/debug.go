package wmssim

import (
	"net/http"
)

// Bounds of one logged request, so a hostile client cannot make the request
// log large: at most this many header names, and values cut to this length.
const (
	maxLoggedHeaders   = 100
	maxLoggedValueLen  = 8 << 10
	maxLoggedPathBytes = 8 << 10
)

// RequestRecord is one request as the simulator received it, for tests that
// check what the gateway passed on (GET /wms/_debug/requests) and for the
// echo (ANY /wms/_debug/echo/...). Headers are verbatim (Authorization
// included: the log exists to show whether the gateway removed it); Go keeps
// Host out of the header map.
type RequestRecord struct {
	Method   string              `json:"method"`
	Path     string              `json:"path"`
	RawQuery string              `json:"raw_query"`
	Headers  map[string][]string `json:"headers"`
}

// recordOf copies what the logs show of r, within the bounds above.
func recordOf(r *http.Request) RequestRecord {
	rec := RequestRecord{
		Method:   r.Method,
		Path:     truncate(r.URL.Path, maxLoggedPathBytes),
		RawQuery: truncate(r.URL.RawQuery, maxLoggedPathBytes),
		Headers:  make(map[string][]string, min(len(r.Header), maxLoggedHeaders)),
	}
	for name, values := range r.Header {
		if len(rec.Headers) == maxLoggedHeaders {
			break
		}
		vs := make([]string, 0, len(values))
		for _, v := range values {
			vs = append(vs, truncate(v, maxLoggedValueLen))
		}
		rec.Headers[name] = vs
	}
	return rec
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// logRequest appends r to the request log, keeping the newest maxRequests.
func (s *Store) logRequest(r *http.Request) {
	rec := recordOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) >= s.maxRequests {
		n := copy(s.requests, s.requests[len(s.requests)-s.maxRequests+1:])
		s.requests = s.requests[:n]
	}
	s.requests = append(s.requests, rec)
}

// serveDebug answers /wms/_debug/requests and /wms/_debug/echo/... (segs
// without "/wms/_debug").
func (h *Handler) serveDebug(w http.ResponseWriter, r *http.Request, segs []string) {
	switch {
	case len(segs) >= 1 && segs[0] == "echo":
		writeValue(w, http.StatusOK, recordOf(r))
	case len(segs) == 1 && segs[0] == "requests":
		s := h.store
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.mu.Lock()
			// Records are never changed once logged, so a copy of the
			// slice is safe to encode outside the lock.
			list := append([]RequestRecord{}, s.requests...)
			s.mu.Unlock()
			writeValue(w, http.StatusOK, list)
		case http.MethodDelete:
			s.mu.Lock()
			s.requests = nil
			s.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			methodNotAllowed(w, "GET, HEAD, DELETE")
		}
	default:
		writeError(w, http.StatusNotFound, codeNoSuchResource, "no such debug path")
	}
}
