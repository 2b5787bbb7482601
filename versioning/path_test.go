package versioning

import "testing"

func TestCheckPath(t *testing.T) {
	ok := []string{
		"/",
		"/a",
		"/a/",
		"/a/b/c",
		"/items/123",
		"/items/A-b_c.d~e",
		"/items/a!$&'()*+,;=:@",
		"/items/%20space",
		"/items/caf%C3%A9",
		"/items/...",
		"/items/.hidden",
		"/items/a..b",
		"/items/..a",
		"/items/x;param",
		"/items/%2E%2E%2E",
	}
	for _, p := range ok {
		if why := checkPath(p); why != "" {
			t.Errorf("checkPath(%q) = %q, want accepted", p, why)
		}
	}
	bad := map[string]string{
		"":                      "the path must start with /",
		"a/b":                   "the path must start with /",
		"//":                    "the path has an empty segment",
		"//a":                   "the path has an empty segment",
		"/a//b":                 "the path has an empty segment",
		"/a/b//":                "the path has an empty segment",
		"/.":                    "the path has a dot segment",
		"/..":                   "the path has a dot segment",
		"/a/../b":               "the path has a dot segment",
		"/a/./b":                "the path has a dot segment",
		"/a/..":                 "the path has a dot segment",
		"/a/%2e%2e/b":           "the path has a dot segment",
		"/a/%2E%2E/b":           "the path has a dot segment",
		"/a/.%2e/b":             "the path has a dot segment",
		"/a/%2e./b":             "the path has a dot segment",
		"/a/%2e/b":              "the path has a dot segment",
		"/a/..;/b":              "the path has a dot segment",
		"/a/..;jsessionid=x/b":  "the path has a dot segment",
		"/a/.;x/b":              "the path has a dot segment",
		"/a/%2e%2e%3b/b":        "the path has a dot segment",
		"/a/;x/b":               "the path has an empty segment",
		"/a/;/b":                "the path has an empty segment",
		"/a/%2fb":               "the path has an encoded slash",
		"/a/%2Fb":               "the path has an encoded slash",
		"/a/..%2f..%2fb":        "the path has an encoded slash",
		"/a/%5cb":               "the path has an encoded backslash",
		"/a/%5C..%5Cb":          "the path has an encoded backslash",
		"/a\\b":                 "the path has a character that is not allowed",
		"/a/..\\..\\b":          "the path has a character that is not allowed",
		"/a/%00":                "the path has an encoded control character",
		"/a/b%0d%0aX-Evil:%201": "the path has an encoded control character",
		"/a/%7f":                "the path has an encoded control character",
		"/a/%252e%252e":         "the path has a double-encoded percent-escape",
		"/a/%25":                "the path has a double-encoded percent-escape",
		"/a/%":                  "the path has a malformed percent-escape",
		"/a/%2":                 "the path has a malformed percent-escape",
		"/a/%zz":                "the path has a malformed percent-escape",
		"/a/%u002e%u002e":       "the path has a malformed percent-escape",
		"/a/b c":                "the path has a character that is not allowed",
		"/a/b\x00":              "the path has a character that is not allowed",
		"/a/b\n":                "the path has a character that is not allowed",
		"/a/caf\xc3\xa9":        "the path has a character that is not allowed",
		"/a/b?c":                "the path has a character that is not allowed",
		"/a/b#c":                "the path has a character that is not allowed",
		"/a/<script>":           "the path has a character that is not allowed",
		"/a/\"q\"":              "the path has a character that is not allowed",
	}
	for p, want := range bad {
		if got := checkPath(p); got != want {
			t.Errorf("checkPath(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestCheckPathDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		_ = checkPath("/api/fulfilment/v4/products/caf%C3%A9/x;y")
	})
	if allocs != 0 {
		t.Fatalf("checkPath allocates %v times per call", allocs)
	}
}

func TestIsName(t *testing.T) {
	for _, s := range []string{"v4", "V3", "products", "outbound-orders", "stock_adjustments", "2026"} {
		if !isName(s) {
			t.Errorf("isName(%q) = false", s)
		}
	}
	for _, s := range []string{"", "_debug", "-x", ".x", "a.b", "a%20", "a/b", "a;b", "a b", "ü"} {
		if isName(s) {
			t.Errorf("isName(%q) = true", s)
		}
	}
}

// hasDotSegment reports whether the path p has a "." or ".." segment.
func hasDotSegment(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if seg := p[start:i]; seg == "." || seg == ".." {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func TestHasDotSegment(t *testing.T) {
	for p, want := range map[string]bool{"/a/../b": true, "/.": true, "/a/.": true, "/a/..b": false, "/a/...": false, "/a": false} {
		if got := hasDotSegment(p); got != want {
			t.Errorf("hasDotSegment(%q) = %v", p, got)
		}
	}
}
