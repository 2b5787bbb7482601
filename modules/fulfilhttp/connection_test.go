package fulfilhttp

import (
	"net/http"
	"reflect"
	"testing"
)

func TestDropConnectionTokens(t *testing.T) {
	names := []string{"X-Partner-Id", "X-Request-Id"}
	for _, tc := range []struct {
		in, want []string // Connection values before and after; nil: no header
	}{
		{[]string{"X-Partner-Id"}, nil},
		{[]string{"x-partner-id"}, nil},
		{[]string{"X-PARTNER-ID"}, nil},
		{[]string{"keep-alive, X-Partner-Id"}, []string{"keep-alive"}},
		{[]string{"X-Partner-Id, X-Request-Id"}, nil},
		{[]string{" \tX-Partner-Id\t , close"}, []string{"close"}},
		{[]string{",,x-request-id,,"}, nil},
		{[]string{"keep-alive", "X-Partner-Id"}, []string{"keep-alive"}},
		{[]string{"X-Partner-Id", "x-partner-id"}, nil},
		{[]string{"Upgrade, X-Partner-Id"}, []string{"Upgrade"}},
		{[]string{"close"}, []string{"close"}},
		{[]string{"keep-alive, Upgrade"}, []string{"keep-alive, Upgrade"}},
		// Not the same header to Caddy's proxy either: left alone.
		{[]string{"X-Partner-Idx, X_Partner_Id"}, []string{"X-Partner-Idx, X_Partner_Id"}},
	} {
		h := http.Header{"X-Partner-Id": {"partner-acme"}}
		if tc.in != nil {
			h["Connection"] = append([]string(nil), tc.in...)
		}
		DropConnectionTokens(h, names)
		if got := h["Connection"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Connection %q: left %q, want %q", tc.in, got, tc.want)
		}
		if got := h["X-Partner-Id"]; !reflect.DeepEqual(got, []string{"partner-acme"}) {
			t.Errorf("Connection %q: X-Partner-Id became %q", tc.in, got)
		}
	}
}

func TestDropConnectionTokensAllocatesNothingWithoutAMatch(t *testing.T) {
	h := http.Header{"Connection": {"keep-alive, Upgrade", "close"}}
	names := []string{"X-Partner-Id", "X-Request-Id"}
	if n := testing.AllocsPerRun(100, func() { DropConnectionTokens(h, names) }); n != 0 {
		t.Errorf("%v allocations for a Connection header that names none of the guard's headers, want 0", n)
	}
}

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{
		"X-Partner-Id": true, "x_tenant": true, "A1!#$%&'*+-.^_`|~": true,
		"": false, "X Partner": false, "X-Partner:": false, "X-Pärtner": false, "X(Partner)": false,
	} {
		if got := ValidHeaderName(name); got != want {
			t.Errorf("ValidHeaderName(%q) = %v, want %v", name, got, want)
		}
	}
}
