package feed

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// serveOnce answers every request with status, content type and body.
func serveOnce(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1/orders"
}

// An answer that is not a feed (a JSON object without "changes", as a
// wrong path of a JSON API gives; an HTML page; a 404) is a counted poll
// error whose message says that the URL is probably wrong; nothing moves.
func TestAnswerThatIsNotAFeedIsACountedErrorNamingTheURL(t *testing.T) {
	for _, c := range []struct {
		name, contentType, body, want string
		status                        int
	}{
		{"JSON without changes", "application/json", `{"orders":[],"next":"5"}`, `no "changes" array`, 200},
		{"empty JSON object", "application/json", `{}`, `no "changes" array`, 200},
		{"changes null", "application/json", `{"changes":null,"next":"5"}`, `no "changes" array`, 200},
		{"HTML page", "text/html; charset=utf-8", `<!doctype html><title>Welcome</title>`, "answered text/html, not JSON", 200},
		{"XML document", "application/xml", `<changes/>`, "answered application/xml, not JSON", 200},
		{"not found", "text/plain", `404 page not found`, "answered 404", 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			pub := &recPublisher{db: db}
			f := testFeed(t, db, pub, PollConfig{URL: serveOnce(t, c.status, c.contentType, c.body)})
			f.Poll(bg)
			f.Poll(bg)
			st := f.Status()
			if !strings.Contains(st.LastError, c.want) || !strings.Contains(st.LastError, "feed URL is probably wrong") {
				t.Errorf("last_error %q, want it to contain %q and the hint that the feed URL is probably wrong", st.LastError, c.want)
			}
			if st.PollErrors != 2 || st.ConsecutiveErrors != 2 || st.Pages != 0 || st.Cursor != "" || pub.calls != 0 {
				t.Errorf("status %+v, publish calls %d; want 2 poll errors, no page, no cursor, nothing published", st, pub.calls)
			}
		})
	}
}

// JSON labelled otherwise than application/json (servers often say
// text/plain) is still read as a page.
func TestFeedLabelledTextPlainIsRead(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := testFeed(t, db, &recPublisher{db: db},
		PollConfig{URL: serveOnce(t, 200, "text/plain; charset=utf-8", `{"changes":[],"next":"0"}`)})
	f.Poll(bg)
	if st := f.Status(); st.PollErrors != 0 || st.Pages != 1 {
		t.Fatalf("status %+v, want one page read and no error", st)
	}
}

// A successful poll clears last_error (the count of errors stays).
func TestSuccessClearsLastError(t *testing.T) {
	db := openDB(t, t.TempDir())
	_, good := startFake(t)
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: serveOnce(t, 500, "text/plain", "down")})
	f.Poll(bg)
	if st := f.Status(); st.LastError == "" || st.LastErrorAt == nil {
		t.Fatalf("after a failed poll: status %+v, want last_error set", st)
	}
	if err := f.Apply(Settings{Publisher: &recPublisher{db: db}, Partners: partnersKind, Poll: PollConfig{URL: good}}); err != nil {
		t.Fatal(err)
	}
	f.Poll(bg)
	if st := f.Status(); st.LastError != "" || st.LastErrorAt != nil || st.PollErrors != 1 || st.ConsecutiveErrors != 0 {
		t.Fatalf("after a successful poll: status %+v, want last_error and last_error_at cleared, poll_errors 1", st)
	}
}

// closedAddr returns an http URL on 127.0.0.1 where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/wms/changes"
}

// A feed that refuses connections right after start-up (started with the
// gateway, or just after it) is waited for: back-off, one info line, a
// warning in the status, no error, no warning in the log. Past StartupWait
// a refusal is an ordinary error; a success ends the wait.
func TestStartupWaitsQuietlyForTheFeed(t *testing.T) {
	db := openDB(t, t.TempDir())
	core, logs := observer.New(zapcore.DebugLevel)
	now := time.Date(2025, 1, 1, 0, 0, 10, 0, time.UTC)
	f, err := New(Options{Name: "wms", Store: db.feed("wms"), Logger: zap.New(core), Clock: func() time.Time { return now }, Rand: func() float64 { return 1 }},
		Settings{Publisher: &recPublisher{db: db}, Partners: partnersKind, Poll: PollConfig{URL: closedAddr(t), Interval: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })

	waits := []time.Duration{f.Poll(bg), f.Poll(bg), f.Poll(bg)}
	if waits[0] != time.Second || waits[1] != 2*time.Second || waits[2] != 4*time.Second {
		t.Errorf("waits while the feed refuses at start-up: %v, want the back-off 1s 2s 4s", waits)
	}
	st := f.Status()
	if st.LastError != "" || st.PollErrors != 0 || st.ConsecutiveErrors != 0 || !strings.Contains(st.Warning, "waiting for the feed to answer") {
		t.Errorf("status while waiting at start-up: %+v, want no error and a warning saying it waits", st)
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 0 {
		t.Errorf("%d warnings logged while waiting at start-up, want none: %v", n, logs.All())
	}
	if n := logs.FilterMessage("feed not answering yet; waiting for it (start-up)").Len(); n != 1 {
		t.Errorf("the info line that the reader waits was logged %d times, want once", n)
	}

	now = now.Add(StartupWait)
	f.Poll(bg)
	st = f.Status()
	if !strings.Contains(st.LastError, "connection refused") || st.PollErrors != 1 || st.ConsecutiveErrors != 1 {
		t.Errorf("status after StartupWait: %+v, want the refusal as an ordinary, counted error", st)
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 1 {
		t.Errorf("%d warnings logged after StartupWait, want 1", n)
	}

	_, good := startFake(t)
	if err := f.Apply(Settings{Publisher: &recPublisher{db: db}, Partners: partnersKind, Poll: PollConfig{URL: good}}); err != nil {
		t.Fatal(err)
	}
	f.Poll(bg)
	if st := f.Status(); st.Warning != "" || st.LastError != "" {
		t.Errorf("status after the feed answered: %+v, want the waiting warning and last_error gone", st)
	}
}

// Only start-up is waited for: once the feed has answered, a refusal is an
// error at once.
func TestRefusalAfterASuccessIsAnError(t *testing.T) {
	db := openDB(t, t.TempDir())
	_, good := startFake(t)
	f := testFeed(t, db, &recPublisher{db: db}, PollConfig{URL: good})
	f.Poll(bg)
	if err := f.Apply(Settings{Publisher: &recPublisher{db: db}, Partners: partnersKind, Poll: PollConfig{URL: closedAddr(t)}}); err != nil {
		t.Fatal(err)
	}
	f.Poll(bg)
	if st := f.Status(); !strings.Contains(st.LastError, "connection refused") || st.PollErrors != 1 {
		t.Fatalf("status after a refusal that follows a success: %+v, want a counted error", st)
	}
}
