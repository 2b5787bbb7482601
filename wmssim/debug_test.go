package wmssim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestDebugRequestLog(t *testing.T) {
	s := newSim(t, true)
	s.mustJSON(200, "GET", "/wms/items?page=1&page_size=2", "", nil,
		partnerHeader, "partner-acme", "X-Request-Id", "req-1")
	s.mustJSON(200, "PUT", "/wms/_debug/echo/a/b?x=1", "hello", nil, "X-Test", "yes")
	s.do("GET", "/not-wms", "")
	var log []RequestRecord
	s.mustJSON(200, "GET", "/wms/_debug/requests", "", &log)
	if len(log) != 3 {
		t.Fatalf("log has %d entries: %+v", len(log), log)
	}
	first := log[0]
	if first.Method != "GET" || first.Path != "/wms/items" || first.RawQuery != "page=1&page_size=2" ||
		first.Headers["X-Partner-Id"][0] != "partner-acme" || first.Headers["X-Request-Id"][0] != "req-1" {
		t.Fatalf("first entry %+v", first)
	}
	if log[1].Method != "PUT" || log[1].Path != "/wms/_debug/echo/a/b" || log[1].Headers["X-Test"][0] != "yes" {
		t.Fatalf("echo entry %+v", log[1])
	}
	if log[2].Path != "/not-wms" {
		t.Fatalf("newest entry %+v", log[2])
	}
	// Reading the log is not logged: reading again gives the same three.
	s.mustJSON(200, "GET", "/wms/_debug/requests", "", &log)
	if len(log) != 3 {
		t.Fatalf("reading the log logged itself: %d entries", len(log))
	}
	status, _, body := s.do("DELETE", "/wms/_debug/requests", "")
	if status != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("DELETE: %d %q", status, body)
	}
	s.mustJSON(200, "GET", "/wms/_debug/requests", "", &log)
	if len(log) != 0 {
		t.Fatalf("after DELETE: %+v", log)
	}
	_, _, raw := s.do("GET", "/wms/_debug/requests", "")
	if string(raw) != "[]\n" {
		t.Fatalf("empty log body %q", raw)
	}
	s.wantError(405, codeMethod, "POST", "/wms/_debug/requests", "")
	s.wantError(404, codeNoSuchResource, "GET", "/wms/_debug/other", "")
}

// The log keeps the newest 100, oldest first.
func TestDebugRequestLogBounded(t *testing.T) {
	s := newSim(t, false)
	for i := 0; i < 130; i++ {
		s.do("GET", fmt.Sprintf("/wms/_debug/echo/%d", i), "")
	}
	var log []RequestRecord
	s.mustJSON(200, "GET", "/wms/_debug/requests", "", &log)
	if len(log) != 100 || log[0].Path != "/wms/_debug/echo/30" || log[99].Path != "/wms/_debug/echo/129" {
		t.Fatalf("log: %d entries, %s .. %s", len(log), log[0].Path, log[len(log)-1].Path)
	}
}

func TestDebugEcho(t *testing.T) {
	s := newSim(t, false)
	for _, m := range []string{"GET", "POST", "DELETE", "PATCH"} {
		var e RequestRecord
		s.mustJSON(200, m, "/wms/_debug/echo/x/y?a=1&b=2", "", &e, "Authorization", "Bearer abc")
		if e.Method != m || e.Path != "/wms/_debug/echo/x/y" || e.RawQuery != "a=1&b=2" ||
			e.Headers["Authorization"][0] != "Bearer abc" {
			t.Fatalf("%s echo %+v", m, e)
		}
	}
	var e RequestRecord
	s.mustJSON(200, "GET", "/wms/_debug/echo", "", &e)
	if e.Path != "/wms/_debug/echo" {
		t.Fatalf("bare echo %+v", e)
	}
}

// A hostile request cannot make one log entry large.
func TestDebugLogEntryBounded(t *testing.T) {
	s := newSim(t, false)
	req, _ := http.NewRequest("GET", s.srv.URL+"/wms/_debug/echo", nil)
	for i := 0; i < 150; i++ {
		req.Header.Set(fmt.Sprintf("X-H%d", i), "v")
	}
	req.Header.Set("X-Big", strings.Repeat("b", 20<<10))
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.h.store.mu.Lock()
	rec := s.h.store.requests[len(s.h.store.requests)-1]
	s.h.store.mu.Unlock()
	if len(rec.Headers) > maxLoggedHeaders {
		t.Fatalf("logged %d header names", len(rec.Headers))
	}
	for name, vs := range rec.Headers {
		for _, v := range vs {
			if len(v) > maxLoggedValueLen {
				t.Fatalf("%s logged with %d bytes", name, len(v))
			}
		}
	}
}
