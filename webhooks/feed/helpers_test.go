package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// testDB is a real storage backend's queue and feed stores. backend_test.go
// (package feed_test) sets how it is opened through SetTestBackend: this
// package's own tests cannot import a backend, which imports this package.
type testDB struct {
	queue  webhooks.QueueStorage
	feed   func(name string) Store
	close  func() error
	closed bool
}

// Close closes the backend (once).
func (db *testDB) Close() error {
	if db.closed {
		return nil
	}
	db.closed = true
	return db.close()
}

var openBackend func(t testing.TB, dir string) (webhooks.QueueStorage, func(name string) Store, func() error)

// SetTestBackend sets the backend the tests of this package run on.
func SetTestBackend(open func(t testing.TB, dir string) (webhooks.QueueStorage, func(name string) Store, func() error)) {
	openBackend = open
}

// openDB opens the test backend in dir, closed when the test ends.
func openDB(t *testing.T, dir string) *testDB {
	t.Helper()
	q, f, closeFn := openBackend(t, dir)
	db := &testDB{queue: q, feed: f, close: closeFn}
	t.Cleanup(func() { db.Close() })
	return db
}

// recPublisher is a Publisher that queues each event as one entry of the
// backend's real queue (id "<partner>/<n>", record "event identifier"),
// committed with the feed's writes, so that what is "queued" is what the
// backend committed; it can be told to fail.
type recPublisher struct {
	db     *testDB
	mu     sync.Mutex
	n      int
	calls  int
	failAt map[int]error // call number (1-based) → error
}

// queueTime is when every recorded event is due: ids order them.
var queueTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (p *recPublisher) Publish(partnerID string, events []webhooks.Event, with webhooks.TxWrites) (int, error) {
	p.mu.Lock()
	p.calls++
	err := p.failAt[p.calls]
	entries := make([]webhooks.QueueEntry, len(events))
	for i, e := range events {
		p.n++
		id := fmt.Sprintf("%s/%08d", partnerID, p.n)
		entries[i] = webhooks.QueueEntry{Pos: webhooks.SchedulePos(queueTime, id), ID: id, PartnerID: partnerID,
			Record: []byte(e.Name + " " + e.Identifier)}
	}
	p.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if err := p.db.queue.Enqueue(entries, with); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// queued returns the committed events as "partner event identifier".
func queued(t *testing.T, db *testDB) []string {
	t.Helper()
	r, err := db.queue.ReadSchedule()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Seek(nil); r.Valid(); r.Next() {
		_, id, _ := webhooks.ParseSchedulePos(r.Pos())
		partner, _, _ := strings.Cut(id, "/")
		if err := r.Value(func(v []byte) error { out = append(out, partner+" "+string(v)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// partnersKind: "cons" is a consolidation partner, "plain" is not.
func partnersKind(id string) (bool, bool, error) {
	switch id {
	case "cons":
		return true, true, nil
	case "plain":
		return false, true, nil
	}
	return false, false, nil
}

// fakeFeed serves a scripted change list the way the simulator does:
// after = index of the next change, next = index after the page.
type fakeFeed struct {
	mu       sync.Mutex
	changes  []string // raw JSON objects
	override func(q url.Values) (status int, body string, ok bool)
	requests []url.Values
}

func (ff *fakeFeed) add(raw ...string) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	ff.changes = append(ff.changes, raw...)
}

func (ff *fakeFeed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ff.mu.Lock()
	ff.requests = append(ff.requests, q)
	over := ff.override
	changes := append([]string(nil), ff.changes...)
	ff.mu.Unlock()
	if over != nil {
		if status, body, ok := over(q); ok {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	after, _ := strconv.Atoi(q.Get("after"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if after > len(changes) {
		after = len(changes)
	}
	end := min(after+limit, len(changes))
	page := changes[after:end]
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"changes":[%s],"next":"%d"}`, strings.Join(page, ","), end)
}

func startFake(t *testing.T) (*fakeFeed, string) {
	t.Helper()
	ff := &fakeFeed{}
	srv := httptest.NewServer(ff)
	t.Cleanup(srv.Close)
	return ff, srv.URL + "/wms/changes"
}

func chg(id, partner, kind, entity, change string, extra ...string) string {
	m := map[string]any{"id": id, "partner": partner, "kind": kind, "entity": entity, "change": change,
		"at": "2025-01-01T00:00:00Z"}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i] == "products" {
			m["products"] = strings.Split(extra[i+1], ",")
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// testFeed makes a Feed polling url with a fixed clock and rand 1.0 (the
// longest back-off), publishing through pub.
func testFeed(t *testing.T, db *testDB, pub Publisher, pc PollConfig) *Feed {
	t.Helper()
	clock := time.Date(2025, 1, 1, 0, 0, 10, 0, time.UTC)
	f, err := New(Options{Name: "wms", Store: db.feed("wms"), Clock: func() time.Time { return clock }, Rand: func() float64 { return 1 }},
		Settings{Publisher: pub, Partners: partnersKind, Poll: pc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f // not started: tests drive Poll themselves
}

var errDisk = errors.New("disk on fire")
