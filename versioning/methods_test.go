package versioning

import (
	"strings"
	"testing"
)

// allowedOf maps path with tab and returns its version's Allow header and
// whether each method is served.
func allowedOf(t *testing.T, tab *Table, path string, methods ...string) (string, []bool) {
	t.Helper()
	m, err := tab.Map(path)
	if err != nil {
		t.Fatalf("Map(%s): %v", path, err)
	}
	var served []bool
	for _, method := range methods {
		served = append(served, m.Version.Allows(method))
	}
	return m.Version.AllowHeader(), served
}

func TestDefaultMethodsAreGETAndHEAD(t *testing.T) {
	tab := mustTable(t, demoConfig())
	allow, served := allowedOf(t, tab, "/api/fulfilment/v4/products", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "get", "")
	if allow != "GET, HEAD" {
		t.Errorf("Allow %q, want \"GET, HEAD\"", allow)
	}
	want := []bool{true, true, false, false, false, false, false, false, false, false, false}
	for i, ok := range served {
		if ok != want[i] {
			t.Errorf("method %d served %v, want %v", i, ok, want[i])
		}
	}
}

func TestVersionMethodsOverrideTheShared(t *testing.T) {
	cfg := demoConfig()
	cfg.Methods = []string{"GET", "HEAD", "POST"}
	cfg.Versions[1].Methods = []string{"GET"}
	tab := mustTable(t, cfg)
	if allow, served := allowedOf(t, tab, "/v4/products", "POST", "DELETE"); allow != "GET, HEAD, POST" || !served[0] || served[1] {
		t.Errorf("v4: Allow %q, POST/DELETE served %v; want GET, HEAD, POST and POST only", allow, served)
	}
	if allow, served := allowedOf(t, tab, "/api/fulfilment/v3/outbounds/1", "GET", "HEAD", "POST"); allow != "GET" || !served[0] || served[1] || served[2] {
		t.Errorf("v3: Allow %q, GET/HEAD/POST served %v; want GET only", allow, served)
	}
	cfg.Methods[0] = "DELETE"
	if _, served := allowedOf(t, tab, "/v4/products", "DELETE"); served[0] {
		t.Error("the table changed with its config's methods")
	}
}

func TestNewRefusesBadMethods(t *testing.T) {
	v := []Version{{Name: "v1", Expose: []string{"a"}}}
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"none":           {Config{Methods: []string{}, Versions: v}, "methods: at least one"},
		"lower case":     {Config{Methods: []string{"get"}, Versions: v}, `methods: "get" is not a method name`},
		"mixed case":     {Config{Methods: []string{"Post"}, Versions: v}, `"Post" is not a method name`},
		"space":          {Config{Methods: []string{"GET HEAD"}, Versions: v}, "is not a method name"},
		"empty":          {Config{Methods: []string{""}, Versions: v}, "is not a method name"},
		"twice":          {Config{Methods: []string{"GET", "HEAD", "GET"}, Versions: v}, `methods: "GET" given twice`},
		"version none":   {Config{Versions: []Version{{Name: "v1", Expose: []string{"a"}, Methods: []string{}}}}, `version "v1": methods: at least one`},
		"version twice":  {Config{Versions: []Version{{Name: "v1", Expose: []string{"a"}, Methods: []string{"PUT", "PUT"}}}}, `version "v1": methods: "PUT" given twice`},
		"version lower":  {Config{Versions: []Version{{Name: "v1", Expose: []string{"a"}, Methods: []string{"delete"}}}}, `version "v1": methods: "delete"`},
		"version colons": {Config{Versions: []Version{{Name: "v1", Expose: []string{"a"}, Methods: []string{"GET:"}}}}, "is not a method name"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New() error = %v, want it to mention %q", name, err, tc.want)
		}
	}
	if _, err := New(Config{Methods: []string{"GET", "PROPFIND", "X-CUSTOM_1"}, Versions: v}); err != nil {
		t.Errorf("upper-case tokens refused: %v", err)
	}
}

// CONNECT opens a tunnel: answered 2xx by the upstream (or, over HTTP/2,
// as a websocket the proxy turns into an upgrade), the proxy copies bytes
// both ways, and the partner could send the upstream any request with any
// identity. No configuration may serve it.
func TestNewRefusesCONNECT(t *testing.T) {
	v := []Version{{Name: "v1", Expose: []string{"a"}}}
	for name, cfg := range map[string]Config{
		"shared":     {Methods: []string{"GET", "CONNECT"}, Versions: v},
		"of version": {Versions: []Version{{Name: "v1", Expose: []string{"a"}, Methods: []string{"CONNECT"}}}},
	} {
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), `"CONNECT"`) || !strings.Contains(err.Error(), "tunnel") {
			t.Errorf("%s: New() error = %v, want a refusal of CONNECT saying it opens a tunnel", name, err)
		}
	}
}
