package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// driveLife drives, for one partner, a whole outbound's life (created, two
// status changes, shipment created, label printed, dispatched, label status),
// an inbound's (created, status, receipt) and a stock adjustment over three
// products; it returns the events a partner of that kind must receive.
func driveLife(e *feedEnv, partner string, consolidation bool) []string {
	ob := e.controlID("outbounds", fmt.Sprintf(`{"partner":%q}`, partner))
	e.control("outbounds/"+ob+"/status", `{"status":"picking"}`)
	e.control("outbounds/"+ob+"/status", `{"status":"packed"}`)
	sh := e.controlID("outbounds/"+ob+"/shipments", `{}`)
	lb := e.controlID("shipments/"+sh+"/labels", `{}`)
	e.control("shipments/"+sh+"/dispatch", `{}`)
	e.control("labels/"+lb+"/status", `{"status":"in-transit"}`)
	ib := e.controlID("inbounds", fmt.Sprintf(`{"partner":%q}`, partner))
	e.control("inbounds/"+ib+"/status", `{"status":"arrived"}`)
	rc := e.controlID("inbounds/"+ib+"/receipts", `{}`)
	adj := e.controlID("adjustments", fmt.Sprintf(`{"partner":%q,"products":["P-1","P-2","P-3"]}`, partner))

	want := []string{
		// created (its first status), picking, packed: three events
		"outbound.status-changed " + ob, "outbound.status-changed " + ob, "outbound.status-changed " + ob,
		"label.status-changed " + lb,
		"inbound.status-changed " + ib, "inbound.status-changed " + ib,
		"receipt.received " + rc,
		"adjustment.posted " + adj + ":P-1",
		"adjustment.posted " + adj + ":P-2",
		"adjustment.posted " + adj + ":P-3",
	}
	if consolidation {
		want = append(want, "shipment.created "+sh, "shipment.shipped "+sh)
	} else {
		want = append(want, "shipment.shipped "+sh) // at label print
	}
	return want
}

// countOf counts, per "type identifier", how many events must arrive.
func countOf(want []string) map[string]int {
	m := map[string]int{}
	for _, w := range want {
		m[w]++
	}
	return m
}

// The simulator's feed becomes exactly the events the interface promises, for
// a consolidation and a non-consolidation partner, each correctly signed.
func TestFeedEndToEndBothPartnerKinds(t *testing.T) {
	t.Parallel()
	e := startFeedEnv(t, "", "interval 100ms")
	wantCons := driveLife(e, "partner-cons", true)
	wantPlain := driveLife(e, "partner-plain", false)
	// A change for a partner the gateway does not know is rejected, shown,
	// and stops nothing.
	e.controlID("outbounds", `{"partner":"partner-unknown"}`)

	waitExact(t, e.cons, "consolidation partner", countOf(wantCons), 20*time.Second)
	waitExact(t, e.plain, "non-consolidation partner", countOf(wantPlain), 20*time.Second)

	st := e.feedStatus("wms")
	rej, _ := st["rejected"].([]any)
	// The reader may have polled before the simulator's listener (in the
	// same process) was up; such an error is kept in the status, but it
	// must be behind it.
	lastOK, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(st["last_success_at"]))
	lastErr, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(st["last_error_at"]))
	recovered := st["last_error"] == nil || lastOK.After(lastErr)
	if st["mode"] != "poll" || !recovered || st["consecutive_errors"] != float64(0) || len(rej) != 1 ||
		!strings.Contains(fmt.Sprint(rej[0]), "unknown partner") || e.position(st["cursor"]) != 23 {
		t.Fatalf("feed status %v", st)
	}
	// 11 changes per partner and the unknown one: 23 changes, 12 + 11 events.
	out, err := e.g.CLI("fulfilment", "feeds", "wms", "--address", e.g.Admin)
	if err != nil || !contains(out, fmt.Sprintf(`"cursor": "%v"`, st["cursor"]), `"lag_seconds"`, "unknown partner") {
		t.Fatalf("caddy fulfilment feeds: %v\n%s", err, out)
	}
	_, _, metrics := do(t, "GET", "http://"+e.g.Admin+"/metrics", nil)
	for _, m := range []string{
		`fulfilgate_feed_changes_read_total{feed="wms"} 23`,
		`fulfilgate_feed_events_produced_total{feed="wms"} 23`,
		`fulfilgate_feed_rejected_changes_total{feed="wms"} 1`,
		`fulfilgate_feed_lag_seconds{feed="wms"}`,
	} {
		if !strings.Contains(string(metrics), m) {
			t.Errorf("metrics lack %s", m)
		}
	}

	// An operator resets the feed to the beginning: every change is read
	// again and skipped as done; no event is produced twice.
	out, err = e.g.CLI("fulfilment", "feeds", "reset", "wms", "--yes", "--address", e.g.Admin)
	if err != nil || !contains(out, `"cursor": ""`) {
		t.Fatalf("caddy fulfilment feeds reset: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.feedStatus("wms")["duplicates"] != float64(23) {
		if time.Now().After(deadline) {
			t.Fatalf("re-read after reset not seen: %v", e.feedStatus("wms"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitExact(t, e.cons, "consolidation partner after reset", countOf(wantCons), time.Second)
	waitExact(t, e.plain, "non-consolidation partner after reset", countOf(wantPlain), time.Second)
}

// waitExact waits until r received every event of want (type identifier →
// count of distinct x-hook-ids), then a little longer, and checks it got
// exactly those and no bad signature.
func waitExact(t *testing.T, r *goReceiver, name string, want map[string]int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, _ := r.events()
		done := true
		for k, n := range want {
			if got[k] < n {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: events missing after %s\n got: %v\nwant: %v", name, within, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // anything extra would arrive now
	got, bad := r.events()
	if len(bad) > 0 {
		t.Errorf("%s: requests with a bad signature: %v", name, bad)
	}
	for k, n := range got {
		if want[k] != n {
			t.Errorf("%s: %s arrived as %d distinct events, want %d", name, k, n, want[k])
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %s arrived as %d distinct events, want %d", name, k, got[k], n)
		}
	}
}
