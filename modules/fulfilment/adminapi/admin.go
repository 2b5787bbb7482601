package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
)

// The admin API of the gateway lives under /fulfilment/ on Caddy's admin
// endpoint. Each part (partners, webhooks, feeds) is its own admin.api module
// with its own route; they share these helpers.

// runningApp returns the fulfilment app of the currently running config and
// its shared state, or an API error (503) when none runs.
func runningApp() (*App, *sharedState, error) {
	ctx := caddy.ActiveContext()
	if ctx.Context == nil {
		return nil, nil, caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: fmt.Errorf("no config is running")}
	}
	v, err := ctx.AppIfConfigured("fulfilment")
	if err != nil {
		return nil, nil, caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: fmt.Errorf("the fulfilment app is not configured")}
	}
	app := v.(*App)
	st := app.current()
	if st == nil {
		return nil, nil, caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: fmt.Errorf("the fulfilment app is not running")}
	}
	return app, st, nil
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
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("invalid JSON body: %v", err)}
	}
	return nil
}
