package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// portalGrace is the rotation grace of the portal tests' gateway: short,
// so a test sees the previous secret stop.
const portalGrace = "6s"

// startPortalGateway runs the demo Caddyfile with the portal's rotation
// grace set to portalGrace.
func startPortalGateway(t *testing.T) *repoGateway {
	t.Helper()
	return startRepoGateway(t, withPortalOption(t, repoCaddyfile(t), "rotation_grace "+portalGrace))
}

// withPortalOption is the demo Caddyfile cf with option (a line of
// fulfilment_portal's block) given to its gateway's portal.
func withPortalOption(t *testing.T, cf, option string) string {
	t.Helper()
	const portal = "\t\tportal\n"
	if !strings.Contains(cf, portal) {
		t.Fatal("the demo Caddyfile's gateway has no portal line to configure")
	}
	return strings.Replace(cf, portal, "\t\tportal {\n\t\t\t"+option+"\n\t\t}\n", 1)
}

// portalLink creates a sign-in link for partner through the CLI.
func portalLink(t *testing.T, g *repoGateway, partner string, args ...string) (link, token string) {
	t.Helper()
	var l struct {
		Token string `json:"token"`
		URL   string `json:"url"`
	}
	cliJSON(t, g, &l, append([]string{"portal", "link", partner, "--url", g.Base + "/portal"}, args...)...)
	if l.Token == "" || !strings.HasPrefix(l.URL, g.Base+"/portal/signin?token=") {
		t.Fatalf("portal link answered %+v, want a token and a URL under %s/portal/signin", l, g.Base)
	}
	return l.URL, l.Token
}

// portalSession is a signed-in session driven with plain HTTP (no browser):
// its cookie and the CSRF token of its pages.
type portalSession struct {
	g      *repoGateway
	cookie *http.Cookie
}

// portalSignIn exchanges a fresh link for partner and returns the session.
func portalSignIn(t *testing.T, g *repoGateway, partner string) *portalSession {
	t.Helper()
	_, token := portalLink(t, g, partner)
	status, h, body := do(t, http.MethodPost, g.Base+"/portal/signin", strings.NewReader(url.Values{"token": {token}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Origin", g.Base)
	if status != http.StatusSeeOther || h.Get("Location") != "/portal/" {
		t.Fatalf("sign-in answered %d, Location %q, want 303 to /portal/\n%s", status, h.Get("Location"), body)
	}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "fulfilgate-portal" && c.Value != "" {
			return &portalSession{g: g, cookie: c}
		}
	}
	t.Fatalf("sign-in set no session cookie: %v", h["Set-Cookie"])
	return nil
}

// get fetches a portal page with the session.
func (s *portalSession) get(t *testing.T, path string) (int, string) {
	t.Helper()
	status, _, body := do(t, http.MethodGet, s.g.Base+"/portal"+path, nil, "Cookie", s.cookie.Name+"="+s.cookie.Value)
	return status, string(body)
}

var csrfPattern = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf reads the session's CSRF token from the overview page.
func (s *portalSession) csrf(t *testing.T) string {
	t.Helper()
	status, body := s.get(t, "/")
	m := csrfPattern.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("overview answered %d without a CSRF token", status)
	}
	return m[1]
}

// post sends a form to the portal with the session; header adds headers
// (Origin is this gateway's unless header sets it).
func (s *portalSession) post(t *testing.T, path string, form url.Values, header ...string) (int, http.Header, string) {
	t.Helper()
	h := append([]string{"Content-Type", "application/x-www-form-urlencoded", "Origin", s.g.Base,
		"Cookie", s.cookie.Name + "=" + s.cookie.Value}, header...)
	status, hdr, body := do(t, http.MethodPost, s.g.Base+"/portal"+path, strings.NewReader(form.Encode()), h...)
	return status, hdr, string(body)
}

var secretPattern = regexp.MustCompile(`id="client-secret" class="secret-value">([^<]+)<`)
var clientIDPattern = regexp.MustCompile(`id="client-id">([^<]+)<`)

// createClient creates a client through the portal's form and returns its
// id and secret as the page shows them.
func (s *portalSession) createClient(t *testing.T) (id, secret string) {
	t.Helper()
	status, _, body := s.post(t, "/settings/integrations/clients", url.Values{"csrf_token": {s.csrf(t)}})
	sm, im := secretPattern.FindStringSubmatch(body), clientIDPattern.FindStringSubmatch(body)
	if status != http.StatusOK || sm == nil || im == nil {
		t.Fatalf("creating a client answered %d without an id and a secret:\n%s", status, body)
	}
	return im[1], sm[1]
}
