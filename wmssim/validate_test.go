package wmssim

import (
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	cases := map[string]bool{
		"":                       true, // emptiness is the caller's rule
		"partner-acme":           true,
		"in transit":             true,
		"Lagerhaus Süd":          true,
		" lead":                  false,
		"trail\t":                false,
		"a\nb":                   false,
		"a\x7fb":                 false,
		"\xff\xfe":               false,
		strings.Repeat("x", 128): true,
		strings.Repeat("x", 129): false,
		"zero\u200bwidth":        false, // invisible format characters are refused
	}
	for in, ok := range cases {
		if got := checkText(in, 128) == ""; got != ok {
			t.Errorf("checkText(%q) accepted=%v, want %v", in, got, ok)
		}
	}
}

func TestValidateProductsAndNumbers(t *testing.T) {
	n := func(v int) *int { return &v }
	many := make([]string, maxProducts+1)
	for i := range many {
		many[i] = "p" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	cases := []struct {
		name string
		req  controlRequest
		ok   bool
	}{
		{"nothing", controlRequest{}, true},
		{"products", controlRequest{Products: []string{"a", "b"}}, true},
		{"too many products", controlRequest{Products: many}, false},
		{"exactly max products", controlRequest{Products: many[:maxProducts]}, true},
		{"seconds max", controlRequest{Seconds: n(maxOutageSecs)}, true},
		{"seconds over", controlRequest{Seconds: n(maxOutageSecs + 1)}, false},
		{"onHand huge", controlRequest{OnHand: n(2_000_000_000)}, false},
		{"long reason ok", controlRequest{Reason: strings.Repeat("r", 256)}, true},
		{"long reason", controlRequest{Reason: strings.Repeat("r", 257)}, false},
		{"long status", controlRequest{Status: strings.Repeat("s", 65)}, false},
	}
	for _, c := range cases {
		if err := validate(&c.req); (err == nil) != c.ok {
			t.Errorf("%s: err %+v, want ok=%v", c.name, err, c.ok)
		}
	}
}
