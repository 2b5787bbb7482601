package wmserrors

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// A released writer holds nothing of its request: not the response it
// wrapped, not the gateway's headers, not what it answered.
func TestReleasedWriterHoldsNothing(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "id-1")
	pw := newProblemResponseWriter(rec, httptest.NewRequest(http.MethodGet, "/wms/items", nil))
	pw.WriteHeader(http.StatusInternalServerError)
	pw.release()
	if pw.ResponseWriter != nil || pw.ctx != nil || pw.ours != nil || pw.wroteHeader || pw.replaced || pw.failed || pw.inline[0].values != nil || pw.inline[0].name != "" {
		t.Fatalf("a released writer still holds its request's state: %+v", pw)
	}
}

// Writers are reused from request to request: an error answer (replaced
// by a problem) followed by a success, and the other way round, each
// answers as if it had a writer of its own, with its own headers.
func TestReusedWritersCarryNothingOver(t *testing.T) {
	rw := New(zap.NewNop())
	const body = `{"items":[],"page":1}`
	for i := range 40 {
		rec := httptest.NewRecorder()
		id := fmt.Sprint("id-", i)
		rec.Header().Set("X-Request-Id", id)
		status := http.StatusOK
		if i%2 == 0 {
			status = http.StatusInternalServerError
		}
		req := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
		if err := rw.ServeHTTP(rec, req, wmsAnswer(status, body, i%4 < 2)); err != nil {
			t.Fatal(err)
		}
		if got := rec.Header().Values("X-Request-Id"); len(got) != 1 || got[0] != id {
			t.Fatalf("request %d: X-Request-Id %q, want only %q", i, got, id)
		}
		if status == http.StatusOK {
			if rec.Code != 200 || rec.Body.String() != body || rec.Header().Get("Server") != "LegacyWMS/4.2" {
				t.Fatalf("request %d after an error answer: a success was changed: %d %v %s", i, rec.Code, rec.Header(), rec.Body)
			}
			continue
		}
		if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" || rec.Header().Get("Server") != "" {
			t.Fatalf("request %d after a success: the error answer is not a problem: %d %v %s", i, rec.Code, rec.Header(), rec.Body)
		}
	}
}

// discardWriter is a ResponseWriter that allocates nothing per answer.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// A successful answer passes the rewriter without an allocation of its
// own: the writer comes from the pool.
func TestSuccessAllocatesNothing(t *testing.T) {
	w := &discardWriter{h: http.Header{"X-Request-Id": {"id"}, "Server": {"Caddy"}}}
	req := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
	body := []byte(`{"items":[]}`)
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(body)
		return err
	})
	rw := New(zap.NewNop())
	if n := testing.AllocsPerRun(200, func() { _ = rw.ServeHTTP(w, req, next) }); n != 0 {
		t.Fatalf("a successful answer allocates %v objects in the rewriter, want 0", n)
	}
}

// The WMS's informational answers are held back, given as reverse_proxy
// gives them (the 1xx answer's headers added to the answer's,
// WriteHeader(1xx), then the answer's own headers put back): the final
// answer is the only one the caller gets, with the gateway's headers.
func TestInformationalAnswersAreHeldBack(t *testing.T) {
	for _, final := range []int{http.StatusOK, http.StatusInternalServerError} {
		rec := httptest.NewRecorder()
		rec.Header().Set("X-Request-Id", "rid-1")
		rec.Header().Set("Link", `</api/fulfilment/v4/products>; rel="successor-version"`)
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			for _, code := range []int{http.StatusContinue, http.StatusEarlyHints} {
				h := w.Header()
				own := h.Clone()
				h.Add("Link", "</hint>; rel=preload")
				w.WriteHeader(code)
				clear(h)
				maps.Copy(h, own)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(final)
			_, err := w.Write([]byte(`{"items":[]}`))
			return err
		})
		req := httptest.NewRequest(http.MethodGet, "/wms/items", nil)
		if err := New(zap.NewNop()).ServeHTTP(rec, req, next); err != nil {
			t.Fatal(err)
		}
		if rec.Code != final {
			t.Fatalf("final %d: the caller got %d first; the WMS's 1xx answers must not be passed on", final, rec.Code)
		}
		if got := rec.Header().Values("X-Request-Id"); len(got) != 1 || got[0] != "rid-1" {
			t.Errorf("final %d: X-Request-Id %q, want the gateway's rid-1", final, got)
		}
		if got := rec.Header().Values("Link"); len(got) != 1 || got[0] != `</api/fulfilment/v4/products>; rel="successor-version"` {
			t.Errorf("final %d: Link %q, want the gateway's successor link only", final, got)
		}
	}
}
