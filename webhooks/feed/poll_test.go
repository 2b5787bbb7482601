package feed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

var bg = context.Background()

// drain polls until the reader says it caught up (or maxPolls), returning
// the waits it asked for.
func drain(t *testing.T, f *Feed, maxPolls int) []time.Duration {
	t.Helper()
	var waits []time.Duration
	for i := 0; i < maxPolls; i++ {
		w := f.Poll(bg)
		waits = append(waits, w)
		if w != 0 {
			return waits
		}
	}
	t.Fatalf("did not catch up in %d polls: %v", maxPolls, waits)
	return nil
}

func TestPollFollowsFullPagesThenWaitsAndResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	ff, u := startFake(t)
	for i := 1; i <= 25; i++ {
		ff.add(chg(fmt.Sprint("c", i), "plain", "outbound", fmt.Sprint("o", i), "status-changed"))
	}
	pub := &recPublisher{db: db}
	pc := PollConfig{URL: u, PageSize: 10, Interval: 700 * time.Millisecond}
	f := testFeed(t, db, pub, pc)
	waits := drain(t, f, 10)
	if !slices.Equal(waits, []time.Duration{0, 0, 700 * time.Millisecond}) {
		t.Fatalf("waits = %v, want two full pages followed at once, then the interval", waits)
	}
	if got := len(queued(t, db)); got != 25 {
		t.Fatalf("queued %d events, want 25", got)
	}
	st := f.Status()
	if st.Cursor != "25" || st.ChangesRead != 25 || st.EventsProduced != 25 || st.Pages != 3 {
		t.Fatalf("status %+v", st)
	}
	// The limit and after parameters went upstream.
	if q := ff.requests[1]; q.Get("after") != "10" || q.Get("limit") != "10" {
		t.Fatalf("second request %v", q)
	}
	_ = f.Close()

	// "Restart": a new Feed on the same database resumes from the cursor.
	ff.add(chg("c26", "cons", "shipment", "s1", "created"))
	f2 := testFeed(t, db, pub, pc)
	if f2.Status().Cursor != "25" {
		t.Fatalf("cursor after restart %q", f2.Status().Cursor)
	}
	drain(t, f2, 5)
	got := queued(t, db)
	if len(got) != 26 || !slices.Contains(got, "cons shipment-created s1") {
		t.Fatalf("after restart: %v", got)
	}
	f2.Poll(bg)
	if q := ff.requests[len(ff.requests)-1]; q.Get("after") != "26" {
		t.Fatalf("after restart read from %v", q)
	}
}

// A page's events go out per partner; a failure after some partners were
// queued leaves the cursor where it was, and reading again queues each event
// exactly once.
func TestPublishFailureMidPageNoDuplicatesNoGaps(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	for i := 1; i <= 200; i++ {
		p := []string{"cons", "plain"}[i%2]
		ff.add(chg(fmt.Sprint("c", i), p, "inbound", fmt.Sprint("i", i), "status-changed"))
	}
	pub := &recPublisher{db: db, failAt: map[int]error{3: errDisk}}
	f := testFeed(t, db, pub, PollConfig{URL: u, PageSize: 200})
	if w := f.Poll(bg); w <= 0 {
		t.Fatalf("wait after a failed publish = %v, want a back-off", w)
	}
	st := f.Status()
	if st.Cursor != "" || !strings.Contains(st.LastError, "disk on fire") || st.ConsecutiveErrors != 1 {
		t.Fatalf("status after failure %+v", st)
	}
	partial := len(queued(t, db))
	if partial == 0 || partial >= 200 {
		t.Fatalf("partial publish queued %d", partial)
	}
	drain(t, f, 5)
	got := queued(t, db)
	if len(got) != 200 {
		t.Fatalf("queued %d events, want exactly 200", len(got))
	}
	seen := map[string]bool{}
	for _, e := range got {
		if seen[e] {
			t.Fatalf("duplicate %s", e)
		}
		seen[e] = true
	}
	if st := f.Status(); st.Cursor != "200" || st.LastError != "" || st.ConsecutiveErrors != 0 || st.PollErrors != 1 {
		t.Fatalf("status after recovery %+v, want cursor 200, the failed poll counted once and last_error cleared", st)
	}
}

func TestCursorGoingBackwardsProducesNoDuplicates(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	for i := 1; i <= 5; i++ {
		ff.add(chg(fmt.Sprint("c", i), "plain", "label", fmt.Sprint("l", i), "status-changed"))
	}
	pub := &recPublisher{db: db}
	f := testFeed(t, db, pub, PollConfig{URL: u, PageSize: 3})
	drain(t, f, 5)
	// The feed now answers a cursor before the one asked for, replaying
	// changes 2..5 plus one new one.
	ff.add(chg("c6", "plain", "label", "l6", "status-changed"))
	ff.mu.Lock()
	ff.override = func(q url.Values) (int, string, bool) {
		if q.Get("after") != "5" {
			return 0, "", false
		}
		ff.override = nil
		return 200, `{"changes":[` + strings.Join(ff.changes[1:6], ",") + `],"next":"1"}`, true
	}
	ff.mu.Unlock()
	f.Poll(bg)
	if st := f.Status(); !strings.Contains(st.Warning, "backwards") || st.Cursor != "1" {
		t.Fatalf("status %+v", st)
	}
	drain(t, f, 10)
	got := queued(t, db)
	if len(got) != 6 {
		t.Fatalf("queued %v, want 6 events", got)
	}
	if st := f.Status(); st.Duplicates < 4 || st.Cursor != "6" {
		t.Fatalf("status %+v", st)
	}
}

// A feed going in circles (full pages of known changes, next cycling) makes
// the reader wait an interval now and then, not spin.
func TestCyclingFeedDoesNotSpin(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	ff.add(chg("c1", "plain", "receipt", "r1", "received"), chg("c2", "plain", "receipt", "r2", "received"))
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u, PageSize: 2})
	ff.mu.Lock()
	ff.override = func(q url.Values) (int, string, bool) {
		next := map[string]string{"": "a", "a": "b", "b": "a"}[q.Get("after")]
		return 200, `{"changes":[` + strings.Join(ff.changes, ",") + `],"next":"` + next + `"}`, true
	}
	ff.mu.Unlock()
	waits := make([]time.Duration, 0, 40)
	for i := 0; i < 40; i++ {
		waits = append(waits, f.Poll(bg))
	}
	if !slices.Contains(waits, DefaultInterval) {
		t.Fatalf("never waited: %v", waits)
	}
	if got := len(queued(t, db)); got != 2 {
		t.Fatalf("queued %d, want 2", got)
	}
}

// Reset: back to the beginning; with forgetSeen a WMS that reuses ids (a
// rebuilt feed) produces its events again, without it they are duplicates.
func TestReset(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	ff.add(chg("1", "plain", "receipt", "r1", "received"), chg("2", "plain", "receipt", "r2", "received"))
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u})
	drain(t, f, 3)
	if err := f.Reset("", false); err != nil {
		t.Fatal(err)
	}
	if f.Status().Cursor != "" {
		t.Fatal("cursor not reset")
	}
	drain(t, f, 3)
	if got := len(queued(t, db)); got != 2 || f.Status().Duplicates != 2 {
		t.Fatalf("reset without forgetting: %d queued, %d duplicates", got, f.Status().Duplicates)
	}
	if err := f.Reset("", true); err != nil {
		t.Fatal(err)
	}
	drain(t, f, 3)
	if got := len(queued(t, db)); got != 4 {
		t.Fatalf("reset forgetting seen ids: %d queued, want 4", got)
	}
	// A reset while a page is being read drops that page.
	gen := f.poll.gen
	_ = f.Reset("1", false)
	next := "2"
	if _, err := f.process(nil, &next, "poll", gen, 0); !errors.Is(err, errReset) {
		t.Fatalf("stale page: %v", err)
	}
	if f.Status().Cursor != "1" {
		t.Fatalf("cursor %q", f.Status().Cursor)
	}
}

// A page far larger than one Badger transaction of the gateway's settings
// (about 3,200 entries) is queued whole and its cursor stored: events go in
// chunks, done-markers of event-less changes in batches of 1,000. A second
// reader of the same page finds every change done.
func TestPageLargerThanATransaction(t *testing.T) {
	const size = 8000
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	for i := range size {
		id := fmt.Sprint("c", i)
		if i%4 == 0 { // an event for the plain partner
			ff.add(chg(id, "plain", "outbound", fmt.Sprint("o", i), "status-changed"))
		} else { // no event for a plain partner: only a done-marker
			ff.add(chg(id, "plain", "shipment", fmt.Sprint("s", i), "created"))
		}
	}
	pub := &recPublisher{db: db}
	pc := PollConfig{URL: u, PageSize: size, Interval: time.Second}
	f := testFeed(t, db, pub, pc)
	if w := f.Poll(bg); w != 0 {
		t.Fatalf("first poll waits %v (%s), want 0 after a full page", w, f.Status().LastError)
	}
	if got := len(queued(t, db)); got != size/4 {
		t.Fatalf("queued %d events, want %d", got, size/4)
	}
	if st := f.Status(); st.Cursor != fmt.Sprint(size) || st.ChangesRead != size {
		t.Fatalf("status %+v", st)
	}
	_ = f.Close()

	// Reading the page again (the cursor reset) queues nothing more.
	f2 := testFeed(t, db, pub, pc)
	if err := f2.Reset("", false); err != nil {
		t.Fatal(err)
	}
	f2.Poll(bg)
	if st := f2.Status(); st.Duplicates != size || len(queued(t, db)) != size/4 {
		t.Fatalf("second read: %+v, %d queued", st, len(queued(t, db)))
	}
}
