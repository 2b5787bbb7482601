package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A link signs in once: the second use is refused and sets no cookie.
func TestPortalALinkWorksOnce(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	_, token := portalLink(t, g, "partner-acme")
	form := strings.NewReader(url.Values{"token": {token}}.Encode())
	if st, _, _ := do(t, http.MethodPost, g.Base+"/portal/signin", form, "Content-Type", "application/x-www-form-urlencoded"); st != http.StatusSeeOther {
		t.Fatalf("the first use of the link answered %d, want 303", st)
	}
	form = strings.NewReader(url.Values{"token": {token}}.Encode())
	st, h, body := do(t, http.MethodPost, g.Base+"/portal/signin", form, "Content-Type", "application/x-www-form-urlencoded")
	if st != http.StatusBadRequest || h.Get("Set-Cookie") != "" || !strings.Contains(string(body), "already used") {
		t.Fatalf("the second use of the link answered %d, Set-Cookie %q, want 400 saying it is used, no cookie", st, h.Get("Set-Cookie"))
	}
}

// Failed sign-ins from one address are throttled (429 with Retry-After).
func TestPortalFailedSignInsAreThrottled(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	var st int
	var h http.Header
	for range 11 {
		form := strings.NewReader(url.Values{"token": {"pl000000000000000000000000.guess"}}.Encode())
		st, h, _ = do(t, http.MethodPost, g.Base+"/portal/signin", form, "Content-Type", "application/x-www-form-urlencoded")
	}
	if st != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("the 11th failed sign-in within a minute answered %d, Retry-After %q; want 429 with Retry-After", st, h.Get("Retry-After"))
	}
}

// Partner A's session, with its own valid CSRF token, can neither see nor
// change partner B's client, whatever id it sends: every route answers
// 404 as for an unknown client, and B's client keeps working.
func TestPortalPartnerACannotReachPartnerBsClients(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	b := portalSignIn(t, g, "partner-globex")
	bID, bSecret := b.createClient(t)
	a := portalSignIn(t, g, "partner-acme")
	csrf := a.csrf(t)
	for _, p := range []string{"/settings/integrations/clients/" + bID + "/rotate", "/settings/integrations/clients/" + bID + "/revoke",
		"/settings/integrations/clients/globex-demo-client/rotate"} {
		if st, body := a.get(t, p); st != http.StatusNotFound || strings.Contains(body, bID+"</code>?") {
			t.Errorf("A GET %s answered %d, want 404 without B's client", p, st)
		}
		if st, _, _ := a.post(t, p, url.Values{"csrf_token": {csrf}}); st != http.StatusNotFound {
			t.Errorf("A POST %s answered %d, want 404", p, st)
		}
	}
	if _, body := a.get(t, "/settings/integrations"); strings.Contains(body, bID) || strings.Contains(body, "globex") {
		t.Error("A's Integrations page shows B's clients")
	}
	if _, err := clientToken(g, bID, bSecret); err != nil {
		t.Fatalf("B's client after A's attempts: %v, want it working", err)
	}
	var audit []struct{ Partner, Action, Target, Outcome string }
	cliJSON(t, g, &audit, "portal", "audit", "--partner", "partner-acme")
	refused := 0
	for _, r := range audit {
		if r.Target == bID && r.Outcome == "not_found" {
			refused++
		}
	}
	if refused != 2 {
		t.Fatalf("A's audit log has %d refused actions on B's client, want 2 (rotate and revoke): %+v", refused, audit)
	}
}

// A state-changing request without the session's CSRF token, with another
// session's, or from another origin, is refused and changes nothing.
func TestPortalRefusesFormsWithoutTheSessionsCSRFTokenOrFromAnotherOrigin(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	other := portalSignIn(t, g, "partner-acme")
	good := a.csrf(t)
	for name, tc := range map[string]struct {
		form   url.Values
		header []string
	}{
		"no token":                   {url.Values{}, nil},
		"a wrong token":              {url.Values{"csrf_token": {"forged"}}, nil},
		"another session's token":    {url.Values{"csrf_token": {other.csrf(t)}}, nil},
		"another origin":             {url.Values{"csrf_token": {good}}, []string{"Origin", "http://evil.example"}},
		"a cross-site fetch":         {url.Values{"csrf_token": {good}}, []string{"Sec-Fetch-Site", "cross-site"}},
		"an opaque origin, no fetch": {url.Values{"csrf_token": {good}}, []string{"Origin", "null"}},
	} {
		if st, _, _ := a.post(t, "/settings/integrations/clients", tc.form, tc.header...); st != http.StatusForbidden {
			t.Errorf("%s: creating a client answered %d, want 403", name, st)
		}
	}
	if _, body := a.get(t, "/settings/integrations"); strings.Contains(body, `data-client="partner-acme-`) {
		t.Fatal("a refused form created a client")
	}
	if st, _, _ := a.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {good}}); st != http.StatusOK {
		t.Fatalf("the same form with the session's token answered %d, want 200", st)
	}
}

// A form larger than the limit is refused with 413.
func TestPortalRefusesLargeForms(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	st, _, _ := a.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {a.csrf(t)}, "pad": {strings.Repeat("x", 64<<10)}})
	if st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 64 KiB form answered %d, want 413", st)
	}
}

// Every portal answer carries the security headers; the session cookie is
// HttpOnly and SameSite=Strict for the whole host.
func TestPortalSecurityHeadersAndCookie(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	_, token := portalLink(t, g, "partner-acme")
	_, h, _ := do(t, http.MethodPost, g.Base+"/portal/signin", strings.NewReader(url.Values{"token": {token}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	set := h.Get("Set-Cookie")
	for _, want := range []string{"fulfilgate-portal=ps", "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %q", set, want)
		}
	}
	if strings.Contains(set, "Secure") || strings.Contains(set, "__Host-") {
		t.Errorf("Set-Cookie %q over plain http: want neither Secure nor the __Host- prefix (a browser would drop the cookie)", set)
	}
	for _, p := range []string{"/signin", "/settings/integrations", "/no-such-page"} {
		_, h, _ := do(t, http.MethodGet, g.Base+"/portal"+p, nil)
		for name, want := range map[string]string{
			"Content-Security-Policy": "frame-ancestors 'none'",
			"Referrer-Policy":         "no-referrer",
			"Cache-Control":           "no-store",
			"X-Content-Type-Options":  "nosniff",
		} {
			if !strings.Contains(h.Get(name), want) {
				t.Errorf("GET %s: %s %q, want it to contain %q", p, name, h.Get(name), want)
			}
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q, want default-src 'self' and no unsafe-inline", p, csp)
		}
	}
}

// The operator lists and revokes sessions; a revoked session's cookie opens
// nothing; the audit log records both, with no secret.
func TestPortalOperatorRevokesASession(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	_, secret := a.createClient(t)
	var sessions []struct {
		ID      string `json:"id"`
		Partner string `json:"partner"`
	}
	cliJSON(t, g, &sessions, "portal", "sessions", "--partner", "partner-acme")
	if len(sessions) != 1 || sessions[0].Partner != "partner-acme" || !strings.HasPrefix(a.cookie.Value, sessions[0].ID+".") {
		t.Fatalf("portal sessions listed %+v, want the one session", sessions)
	}
	cliJSON(t, g, nil, "portal", "revoke", sessions[0].ID)
	if st, _, _ := do(t, http.MethodGet, g.Base+"/portal/settings/integrations", nil, "Cookie", a.cookie.Name+"="+a.cookie.Value); st != http.StatusSeeOther {
		t.Fatalf("a revoked session's page answered %d, want 303 to sign-in", st)
	}
	out, err := g.CLI("fulfilment", "--address", g.Admin, "portal", "audit")
	if err != nil {
		t.Fatalf("portal audit: %v\n%s", err, out)
	}
	var audit []struct{ Action, Actor string }
	if err := json.Unmarshal([]byte(out), &audit); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, r := range audit {
		actions = append(actions, r.Actor+":"+r.Action)
	}
	if got := strings.Join(actions, " "); got != "operator:revoke_session partner:create_client partner:sign_in operator:create_link" {
		t.Fatalf("audit log %q, want the revocation, the client, the sign-in and the link, newest first", got)
	}
	if strings.Contains(out, secret) || strings.Contains(out, a.cookie.Value) || strings.Contains(g.Logs.String(), secret) ||
		strings.Contains(g.Logs.String(), a.cookie.Value[strings.Index(a.cookie.Value, ".")+1:]) {
		t.Fatal("the audit log or the server's log holds the client secret or the session's secret")
	}
}

// Sign-ins and portal actions are counted.
func TestPortalMetrics(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	a.createClient(t)
	a.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {"forged"}})
	form := strings.NewReader(url.Values{"token": {"pl000000000000000000000000.guess"}}.Encode())
	do(t, http.MethodPost, g.Base+"/portal/signin", form, "Content-Type", "application/x-www-form-urlencoded")
	for sample, want := range map[string]float64{
		`fulfilgate_portal_signins_total{outcome="ok"}`:                        1,
		`fulfilgate_portal_signins_total{outcome="invalid_link"}`:              1,
		`fulfilgate_portal_actions_total{action="create_client",outcome="ok"}`: 1,
		`fulfilgate_portal_actions_total{action="sign_in",outcome="ok"}`:       1,
		`fulfilgate_portal_actions_total{action="csrf",outcome="refused"}`:     1,
	} {
		if got := metricValue(t, g.Admin, sample); got != want {
			t.Errorf("%s = %v, want %v", sample, got, want)
		}
	}
}

// A partner cannot create more clients than max_clients (10 by default,
// the Caddyfile's client included): the page disables the button and the
// form answers 409.
func TestPortalStopsAtTheClientLimit(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	a := portalSignIn(t, g, "partner-acme")
	for range 9 {
		a.createClient(t)
	}
	if st, _, body := a.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {a.csrf(t)}}); st != http.StatusConflict ||
		!strings.Contains(body, "the most allowed") {
		t.Fatalf("the 11th client answered %d, want 409 naming the limit", st)
	}
	if _, body := a.get(t, "/settings/integrations"); !strings.Contains(body, `id="create-client" disabled`) {
		t.Fatal("at the limit the Create client button is not disabled")
	}
}

// Deleting a partner ends its portal sessions: a partner created again
// under the same id does not inherit them.
func TestPortalSessionsEndWithTheirPartner(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	cliJSON(t, g, nil, "partner", "create", "partner-initech")
	s := portalSignIn(t, g, "partner-initech")
	if st, _ := s.get(t, "/settings/integrations"); st != http.StatusOK {
		t.Fatalf("the new partner's Integrations page answered %d, want 200", st)
	}
	cliJSON(t, g, nil, "partner", "delete", "partner-initech", "--yes")
	cliJSON(t, g, nil, "partner", "create", "partner-initech")
	if st, _ := s.get(t, "/settings/integrations"); st != http.StatusSeeOther {
		t.Fatalf("the deleted partner's session on the re-created partner answered %d, want 303 to sign-in", st)
	}
}
