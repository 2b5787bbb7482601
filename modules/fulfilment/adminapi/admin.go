// Package adminapi is the gateway's admin API and the `caddy fulfilment`
// command that drives it. The admin API lives under /fulfilment/ on Caddy's
// admin endpoint. Each part (partners, webhooks, feeds) is its own admin.api
// module with its own route; they share these helpers. The command runs in
// another process than the server, so it never opens the data dir: it calls
// the running server's admin API, as `caddy reload` does.
package adminapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// runningApp returns the fulfilment app of the currently running config,
// or an API error (503) when none runs.
func runningApp() (*fulfilment.App, error) {
	app, err := fulfilment.ActiveApp()
	if err != nil {
		return nil, apiError(http.StatusServiceUnavailable, err)
	}
	return app, nil
}

// apiError is an error answer of the admin API: status, and err's message
// as {"error": ...}.
func apiError(status int, err error) error {
	return caddy.APIError{HTTPStatus: status, Err: err}
}

// apiErrorf is apiError with a formatted message.
func apiErrorf(status int, format string, args ...any) error {
	return apiError(status, fmt.Errorf(format, args...))
}

// requireMethod answers 405 with Allow unless r uses method.
func requireMethod(w http.ResponseWriter, r *http.Request, method string) error {
	if r.Method == method {
		return nil
	}
	w.Header().Set("Allow", method)
	return apiErrorf(http.StatusMethodNotAllowed, "method %s not allowed; use %s", r.Method, method)
}

// writeAdminJSON answers status with v as JSON.
func writeAdminJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// decodeAdminJSON reads a JSON request body of at most 1 MiB into v,
// refusing unknown fields; errors are 400 API errors.
func decodeAdminJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apiErrorf(http.StatusBadRequest, "invalid JSON body: %w", err)
	}
	return nil
}
