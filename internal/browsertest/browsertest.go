// Package browsertest runs tests in a real headless Chromium (Debian's
// chromium package) through chromedp: Start gives a browser context with a
// fresh profile, Screenshot saves full-page PNGs as test artefacts.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Chromium is where Debian's chromium package installs the browser.
const Chromium = "/usr/bin/chromium"

// ArtifactsEnv names the directory screenshots go to; by default they go
// to out/screenshots at the repository's root (ignored by git).
const ArtifactsEnv = "FULFILGATE_ARTIFACTS"

// Timeout bounds one browser session of a test.
const Timeout = 3 * time.Minute

// Start starts a headless Chromium with a fresh profile in a temporary
// directory and returns a chromedp context for one tab; the browser ends
// with the test. Without Chromium the test is skipped, naming the package
// to install, except when CI=true, where it fails.
func Start(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		msg := fmt.Sprintf("browser tests need Chromium at %s: install Debian's chromium package (apt-get install -y chromium)", Chromium)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	// The first action starts the browser, for as long as tab lives (a
	// timeout on it would end the browser, not the action).
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// Follow runs actions that make the tab load another page (a click on a
// link or a submit button) and returns once that page has loaded. A page
// must not be read before then: Chromium sends the document again at
// DOMContentLoaded, and the nodes chromedp found in it before (an element
// that WaitVisible saw while the page was still loading) are gone, so a
// read of them fails with "No node with given id found". Actions that
// load no page block until ctx ends.
func Follow(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	if _, err := chromedp.RunResponse(ctx, actions...); err != nil {
		return fmt.Errorf("loading the page: %w", err)
	}
	return nil
}

// Cookies returns the browser's cookies for url.
func Cookies(t *testing.T, ctx context.Context, url string) []*network.Cookie {
	t.Helper()
	res, err := chromedp.Run(ctx, chromedp.Action[network.GetCookiesResult](func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	}))
	if err != nil {
		t.Fatalf("reading the cookies of %s: %v", url, err)
	}
	return res.Cookies
}

// ArtifactsDir is the directory of this test's artefacts (created).
func ArtifactsDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv(ArtifactsEnv)
	if root == "" {
		_, file, _, _ := runtime.Caller(0)
		root = filepath.Join(filepath.Dir(file), "..", "..", "out", "screenshots")
	}
	dir := filepath.Join(root, safeName(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// Screenshot saves a full-page PNG of the current page as
// <ArtifactsDir>/<name>.png and returns its path.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(ArtifactsDir(t), safeName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Phone and Laptop are viewports for Screenshot at another size: run
// chromedp.EmulateViewport(Phone.W, Phone.H) first, then Reset.
var (
	Phone  = struct{ W, H int64 }{390, 844}
	Laptop = struct{ W, H int64 }{1280, 900}
)
