package e2e

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/fulfilgate/fulfilgate/internal/browsertest"
)

// The partner's whole Integrations story in a real Chromium: sign in with
// the operator's link, create a client and use its secret, rotate it (the
// old secret works during the grace period and stops after it), revoke it
// (its token is refused at once), sign out. Each page is saved as a
// screenshot.
func TestPortalIntegrationsInABrowser(t *testing.T) {
	ctx := browsertest.Start(t)
	g := startPortalGateway(t)
	link, linkToken := portalLink(t, g, "partner-acme")
	bp := browserPage{t, ctx, g}
	shot, run, follow, text, location := bp.shot, bp.run, bp.follow, bp.text, bp.location

	// Sign in: the link shows a page; pressing Continue opens the session
	// and leaves the token out of the address bar.
	run("opening the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#continue")))
	shot("01-signin")
	follow("continuing", "#continue", chromedp.WaitVisible(chromedp.CSS(".account")))
	if u := location(); u != g.Base+"/portal/" || strings.Contains(u, linkToken) {
		t.Fatalf("after sign-in the address is %q, want %s/portal/ without the link's token\nserver logs:\n%s", u, g.Base, g.Logs)
	}
	if h := text("main h1"); h != "Welcome, partner-acme" {
		t.Fatalf("overview heading %q, want Welcome, partner-acme", h)
	}
	shot("02-overview")
	cookies := browsertest.Cookies(t, ctx, g.Base+"/portal/")
	if len(cookies) != 1 || cookies[0].Name != "fulfilgate-portal" || !cookies[0].HTTPOnly ||
		cookies[0].SameSite != network.CookieSameSiteStrict || cookies[0].Path != "/" {
		t.Fatalf("session cookies %+v, want one fulfilgate-portal cookie, HttpOnly, SameSite=Strict, Path=/", cookies)
	}

	// Integrations: the configuration's client is read-only.
	follow("opening Integrations", `nav a[href="/portal/settings/integrations"]`,
		chromedp.WaitVisible(chromedp.CSS("#clients")))
	if row := text(`tr[data-client="acme-demo-client"]`); !strings.Contains(row, "Managed by your warehouse") || !strings.Contains(row, "Read-only") {
		t.Fatalf("the configuration's client row reads %q, want it managed by the warehouse and read-only", row)
	}
	shot("03-integrations")

	// Create: the secret is shown once, with the curl line.
	follow("creating a client", "#create-client", chromedp.WaitVisible(chromedp.CSS("#client-secret")))
	clientID, secret := text("#client-id"), text("#client-secret")
	if !strings.HasPrefix(clientID, "partner-acme-") || len(secret) < 43 {
		t.Fatalf("created client %q with secret of %d characters, want a partner-acme-… id and a 43-character secret", clientID, len(secret))
	}
	if curl := text("#curl"); !strings.Contains(curl, clientID+":"+secret) || !strings.Contains(curl, g.Base+"/api/auth/token") {
		t.Fatalf("the curl line %q does not get a token with the new client from %s/api/auth/token", curl, g.Base)
	}
	shot("04-client-created")
	// The Copy buttons put exactly the shown secret and curl line on the
	// clipboard.
	grantClipboard(t, ctx, g.Base)
	if got := clickCopy(t, ctx, "client-secret"); got != secret {
		t.Fatalf("after the secret's Copy button the clipboard holds %s; want exactly the %d-character secret shown", clipboardHolds(got, secret), len(secret))
	}
	if got, curl := clickCopy(t, ctx, "curl"), text("#curl"); got != curl {
		t.Fatalf("after the curl line's Copy button the clipboard holds %s; want exactly the curl line shown", clipboardHolds(got, curl))
	}
	tok := mustClientToken(t, g, clientID, secret)
	if st := shipmentsStatus(t, g, tok.AccessToken); st != http.StatusOK {
		t.Fatalf("v4 shipments with the new client's token: %d, want 200", st)
	}

	// Later pages never show the secret again.
	follow("back to Integrations", "main a.button.primary", chromedp.WaitVisible(chromedp.CSS("#clients")))
	page := bp.html()
	if strings.Contains(page, secret) || !strings.Contains(page, clientID) || !strings.Contains(page, "••••"+secret[len(secret)-4:]) {
		t.Fatal("the Integrations page after creation shows the secret, or not the client with the hint of its secret")
	}

	// Rotate: confirm, then the new secret is shown once.
	follow("rotate", `a[href="/portal/settings/integrations/clients/`+clientID+`/rotate"]`,
		chromedp.WaitVisible(chromedp.CSS("#confirm")))
	shot("05-rotate-confirm")
	follow("confirming the rotation", "#confirm", chromedp.WaitVisible(chromedp.CSS("#client-secret")))
	rotated := text("#client-secret")
	rotatedAt := time.Now()
	if rotated == secret || len(rotated) < 43 {
		t.Fatalf("the rotated secret %q is not a new secret", rotated)
	}
	// During the grace period the old secret still gets a token, which
	// stays valid after the grace until it expires.
	if got := clickCopy(t, ctx, "client-secret"); got != rotated {
		t.Fatalf("after the rotated secret's Copy button the clipboard holds %s; want exactly the %d-character secret shown", clipboardHolds(got, rotated), len(rotated))
	}
	// With the clipboard denied, the Copy button selects the secret for
	// Ctrl+C instead, and says so.
	denyClipboard(t, ctx, g.Base)
	if got := clickCopyDenied(t, ctx, "client-secret"); got != rotated {
		t.Fatalf("with the clipboard denied, the Copy button selected %s; want exactly the %d-character secret shown", clipboardHolds(got, rotated), len(rotated))
	}
	shot("06a-copy-denied-selects")
	graceTok := mustClientToken(t, g, clientID, secret)
	mustClientToken(t, g, clientID, rotated)
	shot("06-rotated")
	if st := shipmentsStatus(t, g, tok.AccessToken); st != http.StatusOK {
		t.Fatalf("v4 shipments with the token of the old secret during the grace: %d, want 200", st)
	}
	// After it, the old secret is refused and the new one still works.
	grace, _ := time.ParseDuration(portalGrace)
	time.Sleep(time.Until(rotatedAt.Add(grace + 500*time.Millisecond)))
	if _, err := clientToken(g, clientID, secret); !isInvalidClient(err) {
		t.Fatalf("the old secret after the grace period: %v, want 401 invalid_client", err)
	}
	if st := shipmentsStatus(t, g, graceTok.AccessToken); st != http.StatusOK {
		t.Fatalf("v4 shipments after the grace with a token the old secret got during it: %d, want 200", st)
	}
	tok = mustClientToken(t, g, clientID, rotated)

	// Revoke: confirm; the client's token is refused at once.
	run("Integrations", chromedp.Navigate(g.Base+"/portal/settings/integrations"), chromedp.WaitVisible(chromedp.CSS("#clients")))
	shot("07-integrations-after-rotation")
	// The same page on a phone.
	run("phone viewport", chromedp.EmulateViewport(browsertest.Phone.W, browsertest.Phone.H), chromedp.Reload())
	shot("07b-integrations-phone")
	run("laptop viewport", chromedp.EmulateViewport(browsertest.Laptop.W, browsertest.Laptop.H), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#clients")))
	follow("revoke", `a[href="/portal/settings/integrations/clients/`+clientID+`/revoke"]`,
		chromedp.WaitVisible(chromedp.CSS("#confirm")))
	shot("08-revoke-confirm")
	follow("confirming the revocation", "#confirm", chromedp.WaitVisible(chromedp.CSS(".notice.success")))
	shot("09-revoked")
	if st := shipmentsStatus(t, g, tok.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("v4 shipments with the revoked client's token: %d, want 401", st)
	}

	// A page that does not exist, and the error page.
	run("an unknown client", chromedp.Navigate(g.Base+"/portal/settings/integrations/clients/no-such-client/revoke"),
		chromedp.WaitVisible(chromedp.CSS("main h1")))
	if h := text("main h1"); h != "404 Not Found" {
		t.Fatalf("an unknown client's page heading %q, want 404 Not Found", h)
	}
	shot("10-not-found")

	// Sign out: the cookie no longer opens a page.
	follow("signing out", ".account button", chromedp.WaitVisible(chromedp.CSS(".signin")))
	shot("11-signed-out")
	run("the overview after sign-out", chromedp.Navigate(g.Base+"/portal/"), chromedp.WaitVisible(chromedp.CSS(".signin")))
	if u := location(); u != g.Base+"/portal/signin" {
		t.Fatalf("the overview after sign-out went to %q, want the sign-in page", u)
	}

	// No secret, link or session token in the gateway's logs.
	logs := g.Logs.String()
	for name, s := range map[string]string{"secret": secret, "rotated secret": rotated, "link token": linkToken,
		"link secret": linkToken[strings.Index(linkToken, ".")+1:]} {
		if strings.Contains(logs, s) {
			t.Errorf("the gateway's logs contain the %s", name)
		}
	}
}

// clientToken gets a token with golang.org/x/oauth2's client credentials.
func clientToken(g *repoGateway, id, secret string) (*oauth2.Token, error) {
	return (&clientCredentials{id: id, secret: secret, url: g.Base + "/api/auth/token"}).token()
}

func mustClientToken(t *testing.T, g *repoGateway, id, secret string) *oauth2.Token {
	t.Helper()
	tok, err := clientToken(g, id, secret)
	if err != nil {
		t.Fatalf("a token for %s: %v", id, err)
	}
	return tok
}

// isInvalidClient reports whether err is the token endpoint's 401.
func isInvalidClient(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized
}
