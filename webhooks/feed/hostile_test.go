package feed

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// Malformed pages and upstream errors never move the cursor; the reader
// backs off (doubling from the interval, capped, jittered) and recovers.
func TestHostilePagesBackOffAndRecover(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	ff.add(chg("c1", "plain", "outbound", "o1", "status-changed"))
	bad := []struct {
		status        int
		body, errPart string
	}{
		{200, `{"changes":[{"id":`, "malformed"},
		{200, `<html>oops</html>`, "malformed"},
		{200, `{"changes":"all of them","next":"1"}`, "not an array"},
		{200, `{"changes":[{"id":"c1"}]}`, "no \"next\""},
		{500, `internal error`, "answered 500"},
		{503, `down`, "answered 503"},
	}
	i := 0
	ff.override = func(q url.Values) (int, string, bool) {
		if i >= len(bad) {
			return 0, "", false
		}
		b := bad[i]
		i++
		return b.status, b.body, true
	}
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u, Interval: time.Second, BackoffMax: 8 * time.Second})
	wantWaits := []time.Duration{1, 2, 4, 8, 8, 8} // seconds; rand = 1 gives the full back-off
	for n, b := range bad {
		w := f.Poll(bg)
		if w != wantWaits[n]*time.Second {
			t.Errorf("failure %d: wait %v, want %v", n+1, w, wantWaits[n]*time.Second)
		}
		st := f.Status()
		if !strings.Contains(st.LastError, b.errPart) || st.Cursor != "" || st.ConsecutiveErrors != n+1 {
			t.Errorf("failure %d: status %+v, want error containing %q", n+1, st, b.errPart)
		}
	}
	drain(t, f, 3)
	if got := queued(t, db); len(got) != 1 {
		t.Fatalf("queued %v", got)
	}
	if st := f.Status(); st.Cursor != "1" || st.ConsecutiveErrors != 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestJitterAndRetryAfter(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	ff.override = func(q url.Values) (int, string, bool) { return 500, "no", true }
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u, Interval: time.Second, BackoffMax: time.Minute})
	f.rand = func() float64 { return 0 }
	if w := f.Poll(bg); w != 500*time.Millisecond {
		t.Fatalf("rand 0: wait %v, want half the back-off", w)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	if err := f.Apply(Settings{Publisher: &recPublisher{db: db}, Partners: partnersKind,
		Poll: PollConfig{URL: srv.URL, Interval: time.Second, BackoffMax: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	if w := f.Poll(bg); w != 20*time.Second {
		t.Fatalf("Retry-After 20: wait %v", w)
	}
}

// A page over the size limit halves the limit asked for until pages fit,
// then the limit grows back.
func TestHugePageHalvesLimit(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	pad := strings.Repeat("x", 900)
	for i := 1; i <= 40; i++ {
		ff.add(chg(fmt.Sprint("c", i), "plain", "receipt", fmt.Sprint("r", i), "received", "pad", pad))
	}
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u, PageSize: 16, MaxPageBytes: 4096})
	for i := 0; i < 60 && f.Status().Cursor != "40"; i++ {
		f.Poll(bg)
	}
	if got := len(queued(t, db)); got != 40 {
		t.Fatalf("queued %d of 40", got)
	}
	limits := map[string]bool{}
	for _, q := range ff.requests {
		limits[q.Get("limit")] = true
	}
	if !limits["16"] || !limits["8"] || !limits["4"] {
		t.Fatalf("limits asked %v, want 16 halved to 8 and 4", limits)
	}
	if st := f.Status(); st.LastError != "" || st.PollErrors < 2 {
		t.Fatalf("after the last page: last error %q, poll errors %d; want last_error cleared and the oversized pages (at least the two that halved the limit) counted",
			st.LastError, st.PollErrors)
	}
}

func TestRequestTimeout(t *testing.T) {
	db := openDB(t, t.TempDir())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: srv.URL, Timeout: 50 * time.Millisecond})
	if w := f.Poll(bg); w <= 0 {
		t.Fatalf("wait %v", w)
	}
	if st := f.Status(); !strings.Contains(st.LastError, "deadline") {
		t.Fatalf("last error %q", st.LastError)
	}
}

// Unusable changes are skipped, counted, kept (bounded, on disk) and never
// stop the changes around them.
func TestRejectedChangesSkippedCountedKeptBounded(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	ff, u := startFake(t)
	ff.add(
		`42`,
		`{"id":7,"partner":"plain","kind":"outbound","entity":"o","change":"created"}`,
		chg("u1", "stranger", "outbound", "o1", "created"),
		chg("k1", "plain", "pallet", "p1", "moved"),
		chg("e1", "plain", "outbound", "", "created"),
		`{"partner":"plain","kind":"outbound","entity":"o2","change":"created"}`,
		chg("ok1", "plain", "outbound", "o3", "created"),
	)
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u, PageSize: 50})
	drain(t, f, 10)
	var reasons []string
	for _, r := range f.Status().Rejected {
		reasons = append(reasons, r.Reason)
	}
	want := []string{"not a JSON object", `field "id": want a string`, `unknown partner "stranger"`,
		`unknown kind "pallet"`, "missing entity", "missing change id"}
	if !slices.Equal(reasons, want) {
		t.Fatalf("rejection reasons\n%q\nwant\n%q", reasons, want)
	}
	for i := 0; i < 150; i++ {
		ff.add(chg(fmt.Sprint("bad", i), "plain", "outbound", "o", "teleported"))
	}
	ff.add(chg("ok2", "cons", "shipment", "s1", "dispatched"))
	drain(t, f, 10)
	got := queued(t, db)
	if len(got) != 2 || got[0] != "cons shipment-shipped s1" || got[1] != "plain outbound-status o3" {
		t.Fatalf("queued %v", got)
	}
	st := f.Status()
	if st.RejectedChanges != 156 || st.RejectedTotal != 156 || len(st.Rejected) != MaxRejected {
		t.Fatalf("rejected: %d counted, %d total, %d kept", st.RejectedChanges, st.RejectedTotal, len(st.Rejected))
	}
	if last := st.Rejected[MaxRejected-1]; last.ChangeID != "bad149" || !strings.Contains(last.Reason, "teleported") || last.Seq != 156 {
		t.Fatalf("newest rejected %+v", last)
	}
	_ = f.Close()
	_ = db.Close()

	// Kept across a restart.
	db = openDB(t, dir)
	defer db.Close()
	f2 := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: u})
	st2 := f2.Status()
	if len(st2.Rejected) != MaxRejected || st2.RejectedTotal != 156 || st2.Rejected[0].Seq != 57 {
		t.Fatalf("after restart: %d kept, total %d, first seq %d", len(st2.Rejected), st2.RejectedTotal, st2.Rejected[0].Seq)
	}
}

func TestIngestIsIdempotentByChangeID(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{})
	m := mustMapping(t, nil)
	batch := []Change{
		DecodeChange([]byte(chg("p1", "plain", "adjustment", "a1", "posted", "products", "x,y,z")), m),
		DecodeChange([]byte(chg("p2", "cons", "label", "l1", "printed", "shipment", "s1")), m),
	}
	res, err := f.Ingest(batch)
	if err != nil || res.Events != 3 || res.Duplicates != 0 {
		t.Fatalf("first ingest %+v %v", res, err)
	}
	res, err = f.Ingest(batch)
	if err != nil || res.Events != 0 || res.Duplicates != 2 {
		t.Fatalf("second ingest %+v %v", res, err)
	}
	if got := queued(t, db); len(got) != 3 {
		t.Fatalf("queued %v", got)
	}
	if st := f.Status(); st.Mode != "push" || st.Cursor != "" {
		t.Fatalf("status %+v", st)
	}
}

// Close returns while a poll is stuck in a request.
func TestCloseIsPromptDuringARequest(t *testing.T) {
	db := openDB(t, t.TempDir())
	entered := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: srv.URL, Timeout: time.Hour})
	f.Start()
	<-entered
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
