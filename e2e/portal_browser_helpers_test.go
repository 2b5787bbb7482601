package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fulfilgate/fulfilgate/internal/browsertest"
)

// browserPage drives the portal of g in the browser of ctx for a test; a
// step that fails ends the test with the gateway's logs.
type browserPage struct {
	t   *testing.T
	ctx context.Context
	g   *repoGateway
}

// shot saves the page as a screenshot named name.
func (p browserPage) shot(name string) { browsertest.Screenshot(p.t, p.ctx, name) }

// run runs actions; what names the step in a failure.
func (p browserPage) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v\nserver logs:\n%s", what, err, p.g.Logs)
	}
}

// follow clicks sel, which loads another page, and runs then once that
// page has loaded (a page read while it loads can be replaced under the
// read: see browsertest.Follow).
func (p browserPage) follow(what, sel string, then ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := browsertest.Follow(p.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		p.t.Fatalf("%s: %v\nserver logs:\n%s", what, err, p.g.Logs)
	}
	p.run(what, then...)
}

// text is the text of sel, trimmed.
func (p browserPage) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// location is the page's address.
func (p browserPage) location() string {
	p.t.Helper()
	u, err := chromedp.Run(p.ctx, chromedp.Location())
	if err != nil {
		p.t.Fatal(err)
	}
	return u
}

// html is the page's whole HTML.
func (p browserPage) html() string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}
