package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// The full admin flow runs through the binary in e2e/tokens_admin_test.go;
// here: the error mapping and the routes.
func TestPartnersAdminErrorStatuses(t *testing.T) {
	for err, want := range map[error]int{
		fmt.Errorf("x %w", tokens.ErrNotFound): http.StatusNotFound,
		fmt.Errorf("x %w", tokens.ErrExists):   http.StatusConflict,
		fmt.Errorf("x %w", tokens.ErrStatic):   http.StatusConflict,
		fmt.Errorf("x %w", tokens.ErrInvalid):  http.StatusBadRequest,
		errors.New("disk on fire"):             http.StatusInternalServerError,
	} {
		var api caddy.APIError
		if !errors.As(tokensAdminErr(err), &api) || api.HTTPStatus != want {
			t.Errorf("%v: %+v, want %d", err, api, want)
		}
	}
}

func TestPartnersAdminRoutes(t *testing.T) {
	got := map[string]bool{}
	for _, r := range (adminPartners{}).Routes() {
		got[r.Pattern] = true
	}
	for _, p := range []string{"/fulfilment/partners", "/fulfilment/partners/", "/fulfilment/keys", "/fulfilment/keys/"} {
		if !got[p] {
			t.Errorf("route %s missing", p)
		}
	}
	// Without a running config the routes answer 503, not a panic.
	err := serveAdminPartners(nil, nil)
	var api caddy.APIError
	if !errors.As(err, &api) || api.HTTPStatus != http.StatusServiceUnavailable {
		t.Fatalf("no running app: %v", err)
	}
}
