package wmssim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWriteErrorShape(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, http.StatusConflict, codeConflict, `quote " and <tag>`)
	if rec.Code != 409 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["errorCode"] != codeConflict || got["errorMessage"] != `quote " and <tag>` {
		t.Fatalf("body %v", got)
	}
}

func TestWriteValueUnencodable(t *testing.T) {
	rec := httptest.NewRecorder()
	writeValue(rec, http.StatusOK, map[string]any{"f": func() {}})
	var e wmsError
	if rec.Code != 500 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.ErrorCode != codeInternal {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	rec := httptest.NewRecorder()
	methodNotAllowed(rec, "POST")
	if rec.Code != 405 || rec.Header().Get("Allow") != "POST" {
		t.Fatalf("%d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}
