package portal

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestTheSessionCookieOverHTTPSHasTheHostPrefixAndSecure(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "https://gateway.example.com/portal/signin", nil)
	r.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	setSessionCookie(w, r, "ps1.secret", time.Now().Add(time.Hour))
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "__Host-fulfilgate-portal" || !c[0].Secure || !c[0].HttpOnly ||
		c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" || c[0].Domain != "" {
		t.Fatalf("cookie over https %+v, want __Host-fulfilgate-portal, Secure, HttpOnly, SameSite=Strict, Path=/, no Domain", c)
	}
	// The session is read only from the cookie of its scheme's name.
	r2 := httptest.NewRequest(http.MethodGet, "https://gateway.example.com/portal/", nil)
	r2.TLS = &tls.ConnectionState{}
	r2.AddCookie(&http.Cookie{Name: cookieHTTP, Value: "ps1.secret"})
	if cookieName(r2) != cookieHTTPS {
		t.Fatalf("cookie name over https %q, want %q", cookieName(r2), cookieHTTPS)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    bool
	}{
		{"a browser's same-origin form", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://gw.test"}, true},
		{"a browser's form under no-referrer", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "null"}, true},
		{"a browser's form behind a TLS-terminating proxy", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://gw.test"}, true},
		{"a cross-site form", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "null"}, false},
		{"a same-site, other-origin form", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other.gw.test"}, false},
		{"another origin without fetch metadata", map[string]string{"Origin": "http://evil.test"}, false},
		{"another scheme without fetch metadata", map[string]string{"Origin": "https://gw.test"}, false},
		{"an opaque origin without fetch metadata", map[string]string{"Origin": "null"}, false},
		{"no browser headers (left to the CSRF token)", map[string]string{}, true},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://gw.test/portal/signout", nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("%s: sameOrigin = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for p, want := range map[string]bool{"/": true, "/settings/integrations": true, "/static/portal.css": true,
		"//settings": false, "/settings/../x": false, "/./x": false, "": false, "x": false} {
		if got := cleanPath(p); got != want {
			t.Errorf("cleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestCaddyfileOptions(t *testing.T) {
	var h Handler
	d := caddyfile.NewTestDispenser(`fulfilment_portal {
		session_idle 20m
		session_max 8h
		rotation_grace 48h
		max_clients 5
		token_url https://gw.example.com/api/auth/token
	}`)
	if err := h.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if h.SessionIdle != caddy.Duration(20*time.Minute) || h.SessionMax != caddy.Duration(8*time.Hour) ||
		h.RotationGrace != caddy.Duration(48*time.Hour) || h.MaxClients != 5 || h.TokenURL != "https://gw.example.com/api/auth/token" {
		t.Fatalf("parsed %+v, want every option", h)
	}
}

func TestCaddyfileMistakesAreRefused(t *testing.T) {
	for _, src := range []string{
		"fulfilment_portal extra",
		"fulfilment_portal {\n session_idle 20m\n session_idle 30m\n}",
		"fulfilment_portal {\n max_clients none\n}",
		"fulfilment_portal {\n colour blue\n}",
	} {
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
			t.Errorf("%q was accepted, want an error", src)
		}
	}
}

func TestProvisionRefusesOutOfRangeOptions(t *testing.T) {
	for name, h := range map[string]Handler{
		"idle over the absolute limit": {SessionIdle: caddy.Duration(2 * time.Hour), SessionMax: caddy.Duration(time.Hour)},
		"absolute limit over 7 days":   {SessionMax: caddy.Duration(8 * 24 * time.Hour)},
		"grace over 7 days":            {RotationGrace: caddy.Duration(8 * 24 * time.Hour)},
		"too many clients":             {MaxClients: MaxMaxClients + 1},
		"a token URL without a host":   {TokenURL: "/api/auth/token"},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
		err := h.Provision(ctx)
		cancel()
		if err == nil {
			t.Errorf("%s: Provision accepted it, want an error", name)
		}
	}
}

func TestEveryPageTemplateParses(t *testing.T) {
	p, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"signin", "overview", "integrations", "client_secret", "client_confirm", "error"} {
		if p.byName[name] == nil {
			t.Errorf("no page %s", name)
		}
	}
}

func TestTemplatesHaveNoInlineScriptOrStyle(t *testing.T) {
	entries, err := templateFS.ReadDir("templates/pages")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"templates/layout.html", "templates/partials.html"}
	for _, e := range entries {
		files = append(files, "templates/pages/"+e.Name())
	}
	for _, f := range files {
		b, err := templateFS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "<script>") || strings.Contains(s, " style=") || strings.Contains(s, "<style") || strings.Contains(s, " onclick=") {
			t.Errorf("%s has inline script or style, which the portal's CSP refuses", f)
		}
	}
}

func TestWithAPrefixOtherPathsGoToTheNextHandlerUntouched(t *testing.T) {
	h := &Handler{Prefix: "/portal"}
	for _, p := range []string{"/api/auth/token", "/api/fulfilment/v4/shipments", "/portalx", "/Portal/", "/", "/api/portal/"} {
		passed := false
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			passed = r.URL.Path == p
			return nil
		})
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://gw.test"+p, nil), next); err != nil {
			t.Fatal(err)
		}
		if !passed || w.Header().Get("Content-Security-Policy") != "" {
			t.Errorf("%s: passed on %v with headers %v; want it passed on unchanged, without the portal's headers", p, passed, w.Header())
		}
	}
}

func TestWithAPrefixThePrefixItselfRedirectsBelowIt(t *testing.T) {
	h := &Handler{Prefix: "/portal"}
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		t.Fatal("/portal was passed on")
		return nil
	})
	if err := h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://gw.test/portal", nil), next); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != "/portal/" {
		t.Fatalf("/portal answered %d to %q, want 308 to /portal/", w.Code, w.Header().Get("Location"))
	}
}

func TestAPrefixMustBeACleanAbsolutePath(t *testing.T) {
	for _, p := range []string{"/", "portal", "/portal/", "/a/../portal", "//portal"} {
		h := Handler{Prefix: p}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
		err := h.Provision(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Errorf("prefix %q: Provision = %v, want it refused", p, err)
		}
	}
}
