package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A feed URL that names a JSON resource other than the feed (here the
// simulator's index, one path up) answers 200 with JSON but no "changes":
// `caddy fulfilment feeds wms` shows it as a counted error that says the
// URL is probably wrong (before, it was a healthy feed with 0 changes).
func TestFeedWithAWrongURLIsAnErrorShownByTheCLI(t *testing.T) {
	t.Parallel()
	wp := freePort(t)
	e := startFeedEnvWithSimPort(t, wp, fmt.Sprintf("http://127.0.0.1:%d/wms", wp), "interval 100ms\n backoff_max 200ms")
	var out string
	whEventually(t, 20*time.Second, "feeds wms shows the error", func() bool {
		var err error
		out, err = e.g.CLI("fulfilment", "feeds", "wms", "--address", e.g.Admin)
		return err == nil && strings.Contains(out, `"poll_errors": `) && !strings.Contains(out, `"poll_errors": 0`)
	})
	if !contains(out, `no \"changes\" array`, "feed URL is probably wrong", `"consecutive_errors": `) {
		t.Fatalf("caddy fulfilment feeds wms:\n%s\nwant a last_error saying there is no \"changes\" array and the URL is probably wrong", out)
	}
}

// At an ordinary start the feed may not answer yet (here the simulator
// starts in another process two seconds after the gateway): the reader
// waits for it with back-off, logs no warning, and once it answers shows
// no error.
func TestFeedStartedAfterTheGatewayIsWaitedForQuietly(t *testing.T) {
	t.Parallel()
	wp := freePort(t)
	gp, ip := freePort(t), freePort(t)
	cf := strings.TrimSuffix(feedCaddyfile("interval 100ms"), simSite)
	g := startGateway(t, cf, fmt.Sprintf("GW_PORT=%d", gp), fmt.Sprintf("INGEST_PORT=%d", ip),
		fmt.Sprintf("FEED_URL=http://127.0.0.1:%d/wms/changes", wp), "INGEST_SECRET="+feedIngestKey)
	time.Sleep(2 * time.Second)
	startGateway(t, "{\n\tadmin {$ADMIN}\n}\n"+simSite, fmt.Sprintf("WMS_PORT=%d", wp), "WMS_NAME=sim")
	var out string
	whEventually(t, 20*time.Second, "the feed is read", func() bool {
		var err error
		out, err = g.CLI("fulfilment", "feeds", "wms", "--address", g.Admin)
		return err == nil && !strings.Contains(out, `"pages": 0`)
	})
	if strings.Contains(out, `"last_error"`) || !strings.Contains(out, `"poll_errors": 0`) || strings.Contains(out, `"warning"`) {
		t.Errorf("caddy fulfilment feeds wms once the feed answers:\n%s\nwant no last_error, no warning, poll_errors 0", out)
	}
	for _, line := range strings.Split(g.Logs.String(), "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "feed") {
			t.Errorf("warning logged while the feed started: %s", line)
		}
	}
}

// startFeedEnvWithSimPort is startFeedEnv with the simulator on port wp.
func startFeedEnvWithSimPort(t *testing.T, wp int, feedURL, feedOptions string) *feedEnv {
	t.Helper()
	gp, ip := freePort(t), freePort(t)
	e := &feedEnv{t: t, gw: fmt.Sprintf("http://127.0.0.1:%d", gp), wms: fmt.Sprintf("http://127.0.0.1:%d", wp),
		ingest: fmt.Sprintf("http://127.0.0.1:%d", ip)}
	e.g = startGateway(t, feedCaddyfile(feedOptions),
		fmt.Sprintf("GW_PORT=%d", gp), fmt.Sprintf("WMS_PORT=%d", wp), fmt.Sprintf("INGEST_PORT=%d", ip),
		"FEED_URL="+feedURL, "INGEST_SECRET="+feedIngestKey, "WMS_NAME="+t.Name())
	waitHTTP(t, e.wms+"/wms")
	return e
}
