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

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/internal/datadir"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// recPublisher is a Publisher that writes each queued event into the
// transaction (key "test/q/<partner>/<n>") so that what is "queued" is what
// Badger committed, and can be told to fail.
type recPublisher struct {
	db     *badger.DB
	mu     sync.Mutex
	n      int
	calls  int
	failAt map[int]error // call number (1-based) → error
}

func (p *recPublisher) Publish(partnerID string, events []webhooks.Event, extra func(txn *badger.Txn) error) (int, error) {
	p.mu.Lock()
	p.calls++
	call := p.calls
	err := p.failAt[call]
	p.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var n int
	err = p.db.Update(func(txn *badger.Txn) error {
		for _, e := range events {
			p.mu.Lock()
			p.n++
			k := fmt.Sprintf("test/q/%s/%08d", partnerID, p.n)
			p.mu.Unlock()
			if err := txn.Set([]byte(k), []byte(e.Name+" "+e.Identifier)); err != nil {
				return err
			}
			n++
		}
		if extra != nil {
			return extra(txn)
		}
		return nil
	})
	return n, err
}

// queued returns the committed events as "partner event identifier".
func queued(t *testing.T, db *badger.DB) []string {
	t.Helper()
	var out []string
	err := db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte("test/q/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			partner := strings.Split(string(it.Item().Key()), "/")[2]
			v, _ := it.Item().ValueCopy(nil)
			out = append(out, partner+" "+string(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openDB(t *testing.T, dir string) *badger.DB {
	t.Helper()
	db, err := badger.Open(datadir.Options(dir, nil)) // the gateway's own settings
	if err != nil {
		t.Fatal(err)
	}
	return db
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
func testFeed(t *testing.T, db *badger.DB, pub Publisher, pc PollConfig) *Feed {
	t.Helper()
	clock := time.Date(2025, 1, 1, 0, 0, 10, 0, time.UTC)
	f, err := New(Options{Name: "wms", DB: db, Clock: func() time.Time { return clock }, Rand: func() float64 { return 1 }},
		Settings{Publisher: pub, Partners: partnersKind, Poll: pc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f // not started: tests drive Poll themselves
}

var errDisk = errors.New("disk on fire")
