package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// kill -9 while the reader is in the middle of the feed, then restart: every
// change becomes its events exactly once (no gap, no event produced twice;
// a delivery may repeat with the same x-hook-id, which receivers dedupe).
func TestFeedKill9MidFeedNoDuplicatesNoGaps(t *testing.T) {
	t.Parallel()
	// The reader follows full pages at once, so it can keep pace with the
	// changes being made and finish before the test looks (under load, the
	// test's own calls are the slower side). A gate in front of the feed
	// passes pages freely up to half the changes, then holds the reader's
	// next request until it is opened: the kill lands mid-feed whatever
	// the machine's load, and wherever the reader is before that point.
	gate := &feedGate{holdAfter: 30, opened: make(chan struct{})}
	srv := httptest.NewServer(gate)
	t.Cleanup(srv.Close)
	t.Cleanup(gate.open) // before srv.Close: a held request must end
	e := startFeedEnvSim(t, "", "interval 50ms\n\t\t\tpage_size 3", true, func(sim string) string {
		gate.mu.Lock()
		gate.upstream = sim
		gate.mu.Unlock()
		return srv.URL + "/changes"
	})
	var want []string
	for i := 0; i < 60; i++ {
		adj := e.controlID("adjustments", `{"partner":"partner-plain","products":["A","B"]}`)
		want = append(want, "adjustment.posted "+adj+":A", "adjustment.posted "+adj+":B")
	}
	// Wait until the reader is part-way, then crash it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := e.position(e.feedStatus("wms")["cursor"])
		if c >= 6 && c < 60 {
			break
		}
		if c >= 60 {
			t.Fatalf("the reader read all 60 changes although the gate holds it after %d (cursor %d)", gate.holdAfter, c)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader did not reach the 6th of 60 changes within 30s (cursor %d)", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.g.Kill9()
	gate.open()
	// More changes while it is down.
	for i := 0; i < 10; i++ {
		adj := e.controlID("adjustments", `{"partner":"partner-plain","products":["C"]}`)
		want = append(want, "adjustment.posted "+adj+":C")
	}
	e.g.Restart()
	waitExact(t, e.plain, "after kill -9", countOf(want), 40*time.Second)
	if ids := e.changeIDs(); len(ids) != 70 {
		t.Fatalf("the simulator has %d changes, want 70", len(ids))
	}
	if st := e.feedStatus("wms"); e.position(st["cursor"]) != 70 {
		t.Fatalf("cursor after restart %v", st["cursor"])
	}
}

// feedGate is a proxy in front of a feed (upstream, set before the first
// request): it passes pages until they have carried holdAfter changes, then
// holds every further request until open is called (the reader waits on it
// as on a slow WMS), and passes everything after that.
type feedGate struct {
	holdAfter int
	opened    chan struct{}
	once      sync.Once
	mu        sync.Mutex
	upstream  string
	passed    int // changes passed so far
}

func (g *feedGate) open() { g.once.Do(func() { close(g.opened) }) }

func (g *feedGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	hold, upstream := g.passed >= g.holdAfter, g.upstream
	g.mu.Unlock()
	if hold {
		select {
		case <-g.opened:
		case <-r.Context().Done(): // the reader gave up, or was killed
			return
		}
	}
	resp, err := http.Get(upstream + "?" + r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var page struct {
		Changes []json.RawMessage `json:"changes"`
	}
	if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &page) == nil {
		g.mu.Lock()
		g.passed += len(page.Changes)
		g.mu.Unlock()
	}
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// The simulator down for a while (503 with Retry-After), then up: the reader
// reports the error, backs off, catches up, and the events arrive.
func TestFeedUpstreamOutageThenCatchUp(t *testing.T) {
	t.Parallel()
	e := startFeedEnv(t, "", "interval 100ms\n\t\t\tbackoff_max 2s")
	e.control("outage", `{"seconds":3}`)
	var want []string
	for i := 0; i < 5; i++ {
		ob := e.controlID("outbounds", `{"partner":"partner-cons"}`)
		want = append(want, "outbound.status-changed "+ob)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		st := e.feedStatus("wms")
		if strings.Contains(fmt.Sprint(st["last_error"]), "503") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 503 reported during the outage: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitExact(t, e.cons, "after the outage", countOf(want), 30*time.Second)
	if st := e.feedStatus("wms"); st["consecutive_errors"] != float64(0) || e.position(st["cursor"]) != 5 {
		t.Fatalf("status after catching up %v", st)
	}
}

// hostileFeed is a feed that misbehaves in turn: garbage, a huge page, wrong
// types, a page whose cursor goes backwards; between and after, it serves
// real changes. Cursors are indexes into its change list.
type hostileFeed struct {
	mu      sync.Mutex
	changes []string
	script  []func(w http.ResponseWriter, after int) bool // true: handled
}

func (h *hostileFeed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.script) > 0 {
		step := h.script[0]
		h.script = h.script[1:]
		if step(w, after) {
			return
		}
	}
	end := min(after+limit, len(h.changes))
	if after > end {
		after = end
	}
	fmt.Fprintf(w, `{"changes":[%s],"next":"%d"}`, strings.Join(h.changes[after:end], ","), end)
}

func feedChange(id, partner, entity string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "partner": partner, "kind": "receipt", "entity": entity, "change": "received"})
	return string(b)
}

func TestFeedHostilePagesNeverStopTheFeed(t *testing.T) {
	t.Parallel()
	h := &hostileFeed{}
	for i := 1; i <= 4; i++ {
		h.changes = append(h.changes, feedChange(fmt.Sprint("r", i), "partner-plain", fmt.Sprint("RCP-", i)))
	}
	write := func(status int, body string) func(http.ResponseWriter, int) bool {
		return func(w http.ResponseWriter, _ int) bool {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	pass := func(http.ResponseWriter, int) bool { return false }
	h.script = []func(http.ResponseWriter, int) bool{
		write(200, `{"changes":[{"id":"r1",`), // garbage JSON
		write(200, `{"changes":"everything","next":"4"}`),
		write(200, `{"changes":[`+strings.Repeat(`{"pad":"`+strings.Repeat("x", 1000)+`"},`, 9000)+`{}],"next":"1"}`), // ~9 MB
		write(500, `boom`),
		pass,
		// wrong types inside changes: each rejected, the page still counts
		func(w http.ResponseWriter, after int) bool {
			fmt.Fprintf(w, `{"changes":[42,{"id":7,"partner":"partner-plain"},{"id":"x1","partner":["p"]},{"id":"x2","partner":"partner-plain","kind":"teleport","entity":"e","change":"x"}],"next":"%d"}`, after)
			return true
		},
		// a cursor that goes backwards, replaying known changes
		func(w http.ResponseWriter, after int) bool {
			fmt.Fprintf(w, `{"changes":[%s],"next":"0"}`, strings.Join(h.changes[:after], ","))
			return true
		},
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	e := startFeedEnv(t, srv.URL+"/changes", "interval 100ms\n\t\t\tbackoff_max 500ms\n\t\t\tpage_size 2")
	var want []string
	for i := 1; i <= 4; i++ {
		want = append(want, fmt.Sprint("receipt.received RCP-", i))
	}
	h.mu.Lock()
	for i := 5; i <= 6; i++ {
		h.changes = append(h.changes, feedChange(fmt.Sprint("r", i), "partner-plain", fmt.Sprint("RCP-", i)))
		want = append(want, fmt.Sprint("receipt.received RCP-", i))
	}
	h.mu.Unlock()
	waitExact(t, e.plain, "hostile feed", countOf(want), 30*time.Second)
	st := e.feedStatus("wms")
	rej, _ := st["rejected"].([]any)
	if len(rej) != 4 || st["cursor"] != "6" {
		t.Fatalf("status %v", st)
	}
	if !contains(e.g.Logs.String(), "feed page too large", "malformed feed page", "answered 500", "cursor went backwards") {
		t.Errorf("logs do not tell every problem:\n%s", e.g.Logs)
	}
}

// The push alternative through the real binary: changes POSTed to the
// internal listener with the shared secret become events, once.
func TestFeedPushIngest(t *testing.T) {
	t.Parallel()
	e := startFeedEnv(t, "", "interval 1s")
	body := `{"changes":[{"id":"w-1","partner":"partner-cons","kind":"shipment","entity":"SHP-P1","change":"created"},
		{"id":"w-2","partner":"partner-plain","kind":"label","entity":"LBL-P1","change":"printed","shipment":"SHP-P2"}]}`
	for i := 0; i < 2; i++ {
		status, _, b := do(t, "POST", e.ingest+"/", strings.NewReader(body),
			"Authorization", "Bearer "+feedIngestKey, "Content-Type", "application/json")
		if status != 200 {
			t.Fatalf("push %d: %d %s", i, status, b)
		}
	}
	status, _, b := do(t, "POST", e.ingest+"/", strings.NewReader(body),
		"Authorization", "Bearer wrong", "Content-Type", "application/json")
	if status != 401 || !strings.Contains(string(b), "unauthorized") {
		t.Fatalf("wrong secret: %d %s", status, b)
	}
	waitExact(t, e.cons, "push cons", map[string]int{"shipment.created SHP-P1": 1}, 10*time.Second)
	waitExact(t, e.plain, "push plain", map[string]int{"shipment.shipped SHP-P2": 1}, 10*time.Second)
}
