package adminapi

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
)

// loadTestConfig runs a real Caddy config (admin endpoint disabled) holding
// only the fulfilment app, so that runningApp finds it.
func loadTestConfig(t *testing.T, webhooksJSON string) *fulfilment.App {
	t.Helper()
	return loadAppConfig(t, fmt.Sprintf(`"webhooks":%s`, webhooksJSON))
}

// loadAppConfig runs loadTestConfig's config with the fulfilment app's
// fields given (JSON object members, without braces) beside data_dir, and
// more apps (members of "apps", such as `"http":{...}`) if given.
func loadAppConfig(t *testing.T, fields string, apps ...string) *fulfilment.App {
	t.Helper()
	var more strings.Builder
	for _, a := range apps {
		more.WriteString("," + a)
	}
	cfg := fmt.Sprintf(`{"admin":{"disabled":true},"apps":{"fulfilment":{"data_dir":%q,%s}%s}}`, t.TempDir(), fields, more.String())
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, err := runningApp()
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// adminDo calls the webhooks admin handler; it returns the status (from the
// API error, if any) and the body.
func adminDo(t *testing.T, method, target, body string) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	w := httptest.NewRecorder()
	if err := serveAdminWebhooks(w, r); err != nil {
		var ae caddy.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("%s %s: not an API error: %v", method, target, err)
		}
		return ae.HTTPStatus, []byte(ae.Err.Error())
	}
	return w.Code, w.Body.Bytes()
}

// partnersDo calls the partners admin handler; it returns the status (from
// the API error, if any) and the body.
func partnersDo(t *testing.T, method, target string) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	w := httptest.NewRecorder()
	if err := serveAdminPartners(w, r); err != nil {
		var ae caddy.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("%s %s: not an API error: %v", method, target, err)
		}
		return ae.HTTPStatus, []byte(ae.Err.Error())
	}
	return w.Code, w.Body.Bytes()
}
