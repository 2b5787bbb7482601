package subscriptions

import (
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/docs"
	"github.com/fulfilgate/fulfilgate/modules/fulfilhttp"
)

// openAPIPath is where the gateway serves its OpenAPI document (docs/openapi.yaml,
// as JSON). The subscriptions handler serves it, behind the Bearer guard: every
// path under /api/fulfilment/ needs a token, and partners without one read the
// same document in the published guide.
const openAPIPath = "/api/fulfilment/v4/openapi.json"

// serveOpenAPI answers GET and HEAD (the methods of openAPIRoute) with the
// OpenAPI document.
func serveOpenAPI(w http.ResponseWriter, r *http.Request, logger *zap.Logger) {
	body, err := docs.OpenAPIJSON()
	if err != nil {
		logger.Error("serving the OpenAPI document", zap.Error(err))
		fulfilhttp.WriteProblem(w, http.StatusInternalServerError, "internal", "internal error; it has been logged")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body) // a failed write is a client gone: nothing is left to answer
	}
}
