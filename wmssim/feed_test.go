package wmssim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// post appends n outbound-created changes through the control surface.
func (s *sim) post(n int, partner string) {
	s.t.Helper()
	for i := 0; i < n; i++ {
		s.mustJSON(201, "POST", "/wms/_control/outbounds", `{"partner":"`+partner+`"}`, nil)
	}
}

func TestFeedCursorWalk(t *testing.T) {
	s := newSim(t, true) // seeding adds items only: no changes
	if p := s.feed(""); len(p.Changes) != 0 || p.Next != "0" {
		t.Fatalf("empty feed %+v", p)
	}
	if p := s.feed("?after=0"); len(p.Changes) != 0 || p.Next != "0" {
		t.Fatalf("empty feed after 0 %+v", p)
	}
	s.post(5, "partner-acme")
	p := s.feed("?limit=2")
	if len(p.Changes) != 2 || p.Changes[0].ID != "1" || p.Changes[1].ID != "2" || p.Next != "2" {
		t.Fatalf("first page %+v", p)
	}
	p = s.feed("?after=" + p.Next + "&limit=2")
	if len(p.Changes) != 2 || p.Changes[0].ID != "3" || p.Next != "4" {
		t.Fatalf("second page %+v", p)
	}
	p = s.feed("?after=" + p.Next + "&limit=2")
	if len(p.Changes) != 1 || p.Changes[0].ID != "5" || p.Next != "5" {
		t.Fatalf("last page %+v", p)
	}
	// Caught up: empty, and the cursor stays where it was.
	p = s.feed("?after=5")
	if len(p.Changes) != 0 || p.Next != "5" {
		t.Fatalf("caught up %+v", p)
	}
	// Every change carries every field; at is RFC 3339 from the store's clock.
	c := s.feed("?after=4").Changes[0]
	if c.Partner != "partner-acme" || c.Kind != "outbound" || c.Entity == "" || c.Products == nil {
		t.Fatalf("change %+v", c)
	}
	if at, err := time.Parse(time.RFC3339, c.At); err != nil || !at.Equal(s.clock.Now()) {
		t.Fatalf("at %q (%v), clock %v", c.At, err, s.clock.Now())
	}
	_, _, raw := s.do("GET", "/wms/changes?after=4", "")
	for _, key := range []string{`"id"`, `"partner"`, `"kind"`, `"entity"`, `"change"`, `"status"`, `"shipment"`, `"products":[]`, `"at"`, `"next"`} {
		if !strings.Contains(string(raw), key) {
			t.Fatalf("feed body lacks %s: %s", key, raw)
		}
	}
}

func TestFeedLimits(t *testing.T) {
	s := newSim(t, false)
	s.mustJSON(201, "POST", "/wms/_control/adjustments", `{"partner":"a","products":["x"]}`, nil)
	n := 0
	for i := 0; i < 1100; i++ {
		s.h.store.mu.Lock()
		s.h.store.appendChange(Change{Partner: "a", Kind: "outbound", Entity: "OB", Change: "created"})
		s.h.store.mu.Unlock()
		n++
	}
	if p := s.feed(""); len(p.Changes) != defaultFeedLimit {
		t.Fatalf("default limit gave %d", len(p.Changes))
	}
	if p := s.feed("?limit=1000"); len(p.Changes) != 1000 || p.Next != "1000" {
		t.Fatalf("limit 1000 gave %d, next %s", len(p.Changes), p.Next)
	}
	if p := s.feed("?after=1000&limit=1000"); len(p.Changes) != n+1-1000 {
		t.Fatalf("rest gave %d", len(p.Changes))
	}
}

func TestFeedHostile(t *testing.T) {
	s := newSim(t, false)
	s.post(3, "a")
	for _, q := range []string{"after=x", "after=-1", "after=4", "after=007", "after=+1", "after=1.0",
		"after=99999999999999999999999", "after=%20"} {
		s.wantError(400, codeBadCursor, "GET", "/wms/changes?"+q, "")
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=-5", "limit=ten", "limit="} {
		if q == "limit=" {
			s.mustJSON(200, "GET", "/wms/changes?"+q, "", nil) // empty = default
			continue
		}
		s.wantError(400, codeBadRequest, "GET", "/wms/changes?"+q, "")
	}
	h := s.mustJSON(405, "POST", "/wms/changes", "{}", nil)
	if h.Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q", h.Get("Allow"))
	}
	s.wantError(404, codeNoSuchResource, "GET", "/wms/changes/1", "")
}

// Past the cap the oldest changes go; a reader behind them resumes at the
// oldest kept change and is told how many it missed. Ids stay monotonic.
func TestFeedRetentionCap(t *testing.T) {
	s := newSim(t, false)
	st := s.h.store
	st.mu.Lock()
	st.maxChanges = 16
	st.mu.Unlock()
	s.post(18, "a") // 16 + 16/8 = 18: no trim yet
	if p := s.feed("?limit=1000"); len(p.Changes) != 18 || p.Changes[0].ID != "1" {
		t.Fatalf("before trim: %d changes from %s", len(p.Changes), p.Changes[0].ID)
	}
	s.post(1, "a") // 19 > 18: trimmed to the newest 16 (4..19)
	p := s.feed("?limit=1000")
	if len(p.Changes) != 16 || p.Changes[0].ID != "4" || p.Next != "19" {
		t.Fatalf("after trim: %d changes from %s, next %s", len(p.Changes), p.Changes[0].ID, p.Next)
	}
	_, h, _ := s.do("GET", "/wms/changes?after=1", "")
	if h.Get("X-WMS-Skipped-Changes") != "2" {
		t.Fatalf("skipped header %q", h.Get("X-WMS-Skipped-Changes"))
	}
	_, h, _ = s.do("GET", "/wms/changes?after=3", "")
	if h.Get("X-WMS-Skipped-Changes") != "" {
		t.Fatalf("skipped header for a reader at the edge %q", h.Get("X-WMS-Skipped-Changes"))
	}
	if p := s.feed("?after=3&limit=1"); p.Changes[0].ID != "4" {
		t.Fatalf("reader at edge got %+v", p.Changes)
	}
	// Ids keep counting after trims; the log never holds more than cap+cap/8.
	s.post(40, "a")
	st.mu.Lock()
	l, last := len(st.changes), st.lastSeq
	st.mu.Unlock()
	if l > 18 || l < 16 || last != 59 {
		t.Fatalf("log holds %d, last %d", l, last)
	}
	if p := s.feed(fmt.Sprintf("?after=%d", last-1)); len(p.Changes) != 1 || p.Changes[0].ID != "59" {
		t.Fatalf("newest %+v", p.Changes)
	}
}

// The real cap keeps at least the last 100,000 changes.
func TestFeedDefaultCapKeeps100k(t *testing.T) {
	if testing.Short() {
		t.Skip("appends 120,000 changes")
	}
	st := newStore(time.Now, false)
	for i := 0; i < 120_000; i++ {
		st.appendChange(Change{Partner: "a", Kind: "outbound", Entity: "OB", Change: "created"})
	}
	if len(st.changes) < 100_000 || st.changes[len(st.changes)-1].ID != "120000" {
		t.Fatalf("kept %d, newest %s", len(st.changes), st.changes[len(st.changes)-1].ID)
	}
	page, next, skipped := st.changesAfter(120_000-100_000, 1)
	if skipped != 0 || next != 20_001 || page[0].ID != "20001" {
		t.Fatalf("reader 100,000 behind: page %+v next %d skipped %d", page, next, skipped)
	}
}

// A restarted warehouse numbers its changes above every id of the run before,
// and reads a cursor of that earlier run as "from the start of this run".
func TestFeedIdsSurviveRestart(t *testing.T) {
	before := time.Now()
	first, err := loadStore("restart-test", false)
	if err != nil {
		t.Fatal(err)
	}
	first.mu.Lock()
	old := first.appendChange(Change{Partner: "p", Kind: "outbound", Change: "created", Entity: "OB-1"})
	first.mu.Unlock()
	if old.seq <= startSeq(before)-1 {
		t.Fatalf("first change %d not above the start time %d", old.seq, startSeq(before))
	}
	if err := releaseStore("restart-test"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Microsecond)

	second, err := loadStore("restart-test", false)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseStore("restart-test")
	second.mu.Lock()
	fresh := second.appendChange(Change{Partner: "p", Kind: "outbound", Change: "created", Entity: "OB-1"})
	cursor, ok := parseCursor(old.ID, second.lastSeq)
	page, next, skipped := second.changesAfter(cursor, 10)
	second.mu.Unlock()
	if fresh.seq <= old.seq {
		t.Fatalf("restarted warehouse reused change ids: %d after %d", fresh.seq, old.seq)
	}
	if !ok {
		t.Fatalf("a cursor of the earlier run (%s) was refused", old.ID)
	}
	if len(page) != 1 || page[0].ID != fresh.ID || next != fresh.seq || skipped != 0 {
		t.Fatalf("after the earlier run's cursor: page %+v next %d skipped %d", page, next, skipped)
	}
}
