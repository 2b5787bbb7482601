package fulfilhttp

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Problem is an RFC 9457 problem details body, the error format of the
// fulfilment resource interface.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Field names the offending request field, for validation errors.
	Field string `json:"field,omitempty"`
	// Versions lists the versions served, for an unknown version.
	Versions []string `json:"versions,omitempty"`
}

// ProblemTypeBase prefixes the "type" URI of every problem the gateway
// answers; the fragment names the kind of problem. The URI resolves to the
// kind's entry in the partners' error registry, docs/partners/errors.md,
// which documents every kind the code emits (problem_registry_test.go holds
// the two together): a new kind needs its entry there, and in the
// ProblemType enumeration of docs/openapi.yaml.
const ProblemTypeBase = "https://github.com/fulfilgate/fulfilgate/blob/main/docs/partners/errors.md#"

// NewProblem returns the problem of status: kind becomes the fragment of
// the type URI (for example "invalid-token"), the title is the status text.
// Set Field or Versions on it where they apply, and answer it with
// WriteProblemBody.
func NewProblem(status int, kind, detail string) Problem {
	return Problem{Type: ProblemTypeBase + kind, Title: http.StatusText(status), Status: status, Detail: detail}
}

// WriteProblem answers NewProblem(status, kind, detail).
func WriteProblem(w http.ResponseWriter, status int, kind, detail string) {
	WriteProblemBody(w, NewProblem(status, kind, detail))
}

// WriteProblemBody answers p.Status with p as application/problem+json.
func WriteProblemBody(w http.ResponseWriter, p Problem) {
	WriteJSON(w, p.Status, "application/problem+json", p)
}

// WriteJSON answers status with v as JSON of the given content type. The
// gateway's own answers (problems, tokens, subscriptions) are never cached
// and never sniffed.
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	body, _ := json.Marshal(v) // only the gateway's own, marshallable types
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write is a client gone: nothing is left to answer
}
