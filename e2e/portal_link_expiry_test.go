package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// expiringLink creates a sign-in link for partner with the CLI's --ttl and
// returns its token and expiry.
func expiringLink(t *testing.T, g *repoGateway, partner, ttl string) (token string, expires time.Time) {
	t.Helper()
	var l struct {
		Token   string    `json:"token"`
		Expires time.Time `json:"expires"`
	}
	cliJSON(t, g, &l, "portal", "link", partner, "--ttl", ttl, "--url", g.Base+"/portal")
	if l.Token == "" || l.Expires.IsZero() {
		t.Fatalf("portal link --ttl %s answered %+v, want a token and an expiry", ttl, l)
	}
	return l.Token, l.Expires
}

// postSignIn presses the sign-in page's Continue with token.
func postSignIn(t *testing.T, g *repoGateway, token string) (int, http.Header, string) {
	t.Helper()
	st, h, body := do(t, http.MethodPost, g.Base+"/portal/signin", strings.NewReader(url.Values{"token": {token}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Origin", g.Base)
	return st, h, string(body)
}

// sessionsOf lists partner's live portal sessions with the CLI.
func sessionsOf(t *testing.T, g *repoGateway, partner string) []struct{ ID, Partner string } {
	t.Helper()
	var ss []struct{ ID, Partner string }
	cliJSON(t, g, &ss, "portal", "sessions", "--partner", partner)
	return ss
}

// wantExpiredLinkRefused checks that token is refused as the portal's
// documented answer to an invalid, expired or used link: 400 with the
// message, and no session cookie.
func wantExpiredLinkRefused(t *testing.T, g *repoGateway, token, what string) {
	t.Helper()
	st, h, body := postSignIn(t, g, token)
	if st != http.StatusBadRequest || !strings.Contains(body, "has expired") {
		t.Fatalf("%s answered %d, want 400 saying the link is invalid, has expired or was already used\n%s", what, st, body)
	}
	if sc := h.Values("Set-Cookie"); len(sc) != 0 {
		t.Fatalf("%s set cookies %q, want none", what, sc)
	}
}

// A link made with the shortest --ttl (1m) signs in no one once it has
// expired: the Continue button answers 400 with the portal's message, sets
// no cookie and opens no session. It stays refused after a fresh link was
// issued, which signs in; and after the fresh one was used.
func TestPortalExpiredLinkIsRefusedAndAFreshOneWorks(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	expired, expires := expiringLink(t, g, "partner-acme", "1m")
	if d := time.Until(expires); d <= 0 || d > time.Minute+5*time.Second {
		t.Fatalf("a 1m link expires in %v, want about a minute", d)
	}
	// The link's expiry is the server's clock's, on this machine: once the
	// test's clock has passed it, so has the server's.
	time.Sleep(time.Until(expires.Add(time.Second)))

	// Opening the link still shows the page (it is used only by the POST).
	if st, _, body := do(t, http.MethodGet, g.Base+"/portal/signin?token="+url.QueryEscape(expired), nil); st != http.StatusOK || !strings.Contains(string(body), `id="continue"`) {
		t.Fatalf("opening the expired link answered %d, want 200 with the Continue button", st)
	}
	wantExpiredLinkRefused(t, g, expired, "the expired link")
	if ss := sessionsOf(t, g, "partner-acme"); len(ss) != 0 {
		t.Fatalf("after the expired link, partner-acme has sessions %+v, want none", ss)
	}

	// A fresh link is issued: the expired one stays refused; the fresh one
	// signs in, once.
	_, fresh := portalLink(t, g, "partner-acme")
	wantExpiredLinkRefused(t, g, expired, "the expired link after a fresh one was issued")
	st, h, body := postSignIn(t, g, fresh)
	if st != http.StatusSeeOther || h.Get("Location") != "/portal/" || !strings.Contains(h.Get("Set-Cookie"), "fulfilgate-portal=") {
		t.Fatalf("the fresh link answered %d, Location %q, Set-Cookie %q, want 303 to /portal/ with the session cookie\n%s",
			st, h.Get("Location"), h.Get("Set-Cookie"), body)
	}
	wantExpiredLinkRefused(t, g, expired, "the expired link after the fresh one was used")
	if ss := sessionsOf(t, g, "partner-acme"); len(ss) != 1 {
		t.Fatalf("partner-acme has sessions %+v, want the fresh link's one", ss)
	}
}

// --ttl is bounded: below 1m or above 24h no link is made (400 naming the
// bounds); 1m and 24h themselves are accepted.
func TestPortalLinkTTLOutsideItsBoundsIsRefused(t *testing.T) {
	t.Parallel()
	g := startPortalGateway(t)
	for _, ttl := range []string{"59s", "24h1m", "-5m"} {
		out, err := g.CLI("fulfilment", "--address", g.Admin, "portal", "link", "partner-acme", "--ttl", ttl)
		if err == nil || !strings.Contains(out, "400") || !strings.Contains(out, "between 1m and 24h") || strings.Contains(out, "token") {
			t.Errorf("portal link --ttl %s: %v\n%s\nwant a failure with 400 naming the bounds 1m and 24h, and no link", ttl, err, out)
		}
	}
	for _, ttl := range []string{"1m", "24h"} {
		if _, expires := expiringLink(t, g, "partner-acme", ttl); expires.IsZero() {
			t.Errorf("portal link --ttl %s gave no link", ttl)
		}
	}
}
