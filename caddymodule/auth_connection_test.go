package caddymodule

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// The guard takes the names of the headers it sets or strips out of
// Connection, so that reverse_proxy, which removes every header Connection
// names, cannot remove the identity or the request id the guard set.
func TestAuthGuardKeepsItsHeadersOutOfConnection(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{StripHeaders: []string{"X-Client-Id"}})
	tok, err := a.tokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		connection []string
		want       []string // Connection as the next handler sees it; nil: none
	}{
		{[]string{"X-Partner-Id"}, nil},
		{[]string{"keep-alive, x-partner-id"}, []string{"keep-alive"}},
		{[]string{"X-REQUEST-ID", "close"}, []string{"close"}},
		{[]string{"x-client-id, X-Custom"}, []string{"X-Custom"}},
		{[]string{"x-client-id, Upgrade"}, nil}, // no upgrade is forwarded either
		{[]string{"keep-alive"}, []string{"keep-alive"}},
	} {
		hdr := []string{"Authorization", "Bearer " + tok.AccessToken}
		for _, v := range tc.connection {
			hdr = append(hdr, "Connection", v)
		}
		w, seen := serveAuth(t, h, hdr...)
		if w.Code != http.StatusTeapot || !seen.called {
			t.Fatalf("Connection %q: %d %s, want the request passed on", tc.connection, w.Code, w.Body)
		}
		if got := seen.header["Connection"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Connection %q: next saw Connection %q, want %q", tc.connection, got, tc.want)
		}
		if got := seen.header.Values("X-Partner-Id"); !reflect.DeepEqual(got, []string{"partner-acme"}) {
			t.Errorf("Connection %q: next saw X-Partner-Id %q", tc.connection, got)
		}
	}
}

func TestAuthGuardRefusesHeaderNamesItCannotSet(t *testing.T) {
	for name, h := range map[string]*AuthHandler{
		"identity with a space":       {IdentityHeader: "bad header"},
		"identity not a token":        {IdentityHeader: "X(Partner)"},
		"identity hop-by-hop":         {IdentityHeader: "keep-alive"},
		"identity is Connection":      {IdentityHeader: "Connection"},
		"request id hop-by-hop":       {RequestIDHeader: "Upgrade"},
		"identity is the request id":  {IdentityHeader: "x-request-id"},
		"both named alike":            {IdentityHeader: "X-Id", RequestIDHeader: "x-id"},
		"strip header not a token":    {StripHeaders: []string{"X Client"}},
		"strip header with the colon": {StripHeaders: []string{"X-Client:"}},
	} {
		err := h.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "fulfilment_auth: ") {
			t.Errorf("%s: Validate = %v, want a fulfilment_auth error", name, err)
		}
	}
	if err := (&AuthHandler{IdentityHeader: "X-Tenant", RequestIDHeader: "X-Correlation-Id", StripHeaders: []string{"X-Wms-User"}}).Validate(); err != nil {
		t.Errorf("valid names refused: %v", err)
	}
}

// The guard passes on neither a protocol upgrade nor trailers: an upgrade
// the upstream accepted would carry any request with any identity, and
// trailers arrive after the guard ran.
func TestAuthGuardForwardsNoUpgradeNorTrailers(t *testing.T) {
	a := startTokensApp(t, testTokensConfig())
	h, _ := newAuthHandler(t, a, &AuthHandler{})
	tok, err := a.tokenService().Token(mustAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	w, seen := serveAuth(t, h, "Authorization", "Bearer "+tok.AccessToken,
		"Connection", "keep-alive, Upgrade, HTTP2-Settings", "Upgrade", "h2c", "Trailer", "X-Partner-Id")
	if w.Code != http.StatusTeapot || !seen.called {
		t.Fatalf("%d %s, want the request passed on", w.Code, w.Body)
	}
	for _, name := range []string{"Upgrade", "Trailer"} {
		if v, ok := seen.header[name]; ok {
			t.Errorf("next saw %s %q, want none", name, v)
		}
	}
	if got := seen.header["Connection"]; !reflect.DeepEqual(got, []string{"keep-alive, HTTP2-Settings"}) {
		t.Errorf("next saw Connection %q, want [\"keep-alive, HTTP2-Settings\"]", got)
	}
}
