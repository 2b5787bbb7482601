package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// grantClipboard lets pages of origin read and write the clipboard, as a
// partner's browser does after asking (headless Chromium asks no one).
func grantClipboard(t *testing.T, ctx context.Context, origin string) {
	t.Helper()
	setClipboard(t, ctx, origin, browser.PermissionSettingGranted)
}

// denyClipboard refuses pages of origin the clipboard, as a browser does
// when the partner (or a policy) said no.
func denyClipboard(t *testing.T, ctx context.Context, origin string) {
	t.Helper()
	setClipboard(t, ctx, origin, browser.PermissionSettingDenied)
}

func setClipboard(t *testing.T, ctx context.Context, origin string, setting browser.PermissionSetting) {
	t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: setting, Origin: origin,
		}); err != nil {
			t.Fatalf("setting %s of %s to %s: %v", name, origin, setting, err)
		}
	}
}

// clipboardSentinel is put on the clipboard before a Copy button is
// clicked, so that a button that copies nothing is seen.
const clipboardSentinel = "(the clipboard before the click)"

// clickCopy clicks the Copy button of the element with id, waits for the
// button to say "Copied" (the page's sign that the copy worked) and
// returns what the clipboard holds then.
func clickCopy(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	button := `button[data-copy="` + id + `"]`
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText(`+jsString(t, clipboardSentinel)+`)`, chromedp.EvalAwaitPromise),
		chromedp.WaitVisible(chromedp.CSS(button)),
		chromedp.Click(chromedp.CSS(button)),
		chromedp.Poll[chromedp.Void](`document.querySelector(`+jsString(t, button)+`).textContent === "Copied"`),
	); err != nil {
		t.Fatalf("clicking the Copy button of #%s: %v", id, err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading the clipboard after copying #%s: %v", id, err)
	}
	return got
}

// jsString is s as a JavaScript string literal.
func jsString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("quoting %q for JavaScript: %v", s, err)
	}
	return string(b)
}

// clickCopyDenied clicks the Copy button of the element with id while the
// clipboard is denied, waits for the button to say what the page does
// instead (it selects the value for Ctrl+C) and returns the selected text.
func clickCopyDenied(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	button := `button[data-copy="` + id + `"]`
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.getSelection().removeAllRanges()`),
		chromedp.WaitVisible(chromedp.CSS(button)),
		chromedp.Click(chromedp.CSS(button)),
		chromedp.Poll[chromedp.Void](`document.querySelector(`+jsString(t, button)+`).textContent === "Selected: press Ctrl+C"`),
	); err != nil {
		t.Fatalf("clicking the Copy button of #%s with the clipboard denied: %v", id, err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.getSelection().toString()`))
	if err != nil {
		t.Fatalf("reading the selection after copying #%s: %v", id, err)
	}
	return got
}

// clipboardHolds describes what the clipboard holds beside what it should,
// without printing a secret.
func clipboardHolds(got, want string) string {
	switch {
	case got == clipboardSentinel:
		return "nothing (it holds what it held before the click)"
	case got == "":
		return "nothing"
	case strings.Contains(want, got):
		return fmt.Sprintf("%d characters, a part of what is shown", len(got))
	case strings.Contains(got, want):
		return fmt.Sprintf("%d characters, more than what is shown", len(got))
	}
	return fmt.Sprintf("%d characters, not what is shown", len(got))
}
