package tokenauth

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestAuthCaddyfile(t *testing.T) {
	h := new(AuthHandler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`fulfilment_auth {
		identity_header X-Wms-Partner
		strip_header X-A X-B
		realm r
		request_id_header X-Trace
	}`)); err != nil {
		t.Fatal(err)
	}
	if h.IdentityHeader != "X-Wms-Partner" || strings.Join(h.StripHeaders, ",") != "X-A,X-B" || h.Realm != "r" ||
		h.RequestIDHeader != "X-Trace" {
		t.Fatalf("%+v", h)
	}
	for _, src := range []string{"fulfilment_auth a b", "fulfilment_auth {\n realm\n}", "fulfilment_auth {\n x 1\n}", "fulfilment_auth {\n strip_header\n}", "fulfilment_auth {\n request_id_header\n}"} {
		if err := new(AuthHandler).UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
			t.Errorf("accepted %q", src)
		}
	}
	if err := new(TokenHandler).UnmarshalCaddyfile(caddyfile.NewTestDispenser("fulfilment_token x")); err == nil {
		t.Error("fulfilment_token with an argument accepted")
	}
}
