package wmssim

import (
	"encoding/json"
	"net/http"
)

// serverHeader is what the old system calls itself on every answer.
const serverHeader = "LegacyWMS/4.2"

// Error codes of the warehouse's own error body
// {"errorCode": "...", "errorMessage": "..."}.
const (
	codeBadRequest     = "WMS-400-BAD-REQUEST"
	codeBadCursor      = "WMS-400-INVALID-CURSOR"
	codeNotFound       = "WMS-404-NOT-FOUND"
	codeNoSuchResource = "WMS-404-NO-SUCH-RESOURCE"
	codeMethod         = "WMS-405-METHOD-NOT-ALLOWED"
	codeConflict       = "WMS-409-CONFLICT"
	codeTooLarge       = "WMS-413-PAYLOAD-TOO-LARGE"
	codeUnavailable    = "WMS-503-MAINTENANCE"
	codeInternal       = "WMS-500-INTERNAL"
)

// wmsError is the old system's error body.
type wmsError struct {
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

// writeJSON answers status with body, which is already JSON.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// writeValue marshals v and answers it with status.
func writeValue(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, "could not encode the answer")
		return
	}
	writeJSON(w, status, body)
}

// writeError answers status with the old system's error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	body, _ := json.Marshal(wmsError{ErrorCode: code, ErrorMessage: message}) // strings always marshal
	writeJSON(w, status, body)
}

// methodNotAllowed answers 405 naming the allowed methods.
func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, codeMethod, "method not allowed; allowed: "+allow)
}
