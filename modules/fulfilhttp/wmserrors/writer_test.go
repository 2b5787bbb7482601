package wmserrors

import (
	"fmt"
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
	pw := newProblemResponseWriter(rec)
	pw.WriteHeader(http.StatusInternalServerError)
	pw.release()
	if pw.ResponseWriter != nil || pw.ours != nil || pw.wroteHeader || pw.replaced || pw.failed || pw.inline[0].values != nil || pw.inline[0].name != "" {
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
