package badgerstore

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// One process holds a Badger data dir: its feed reader always reads, and
// its status names no reader and no lease, as before leases existed.
func TestABadgerFeedReaderAlwaysReadsAndShowsNoLease(t *testing.T) {
	db := openDB(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"changes":[],"next":"7"}`))
	}))
	t.Cleanup(srv.Close)
	f, err := feed.New(feed.Options{Name: "wms", Store: New(db).Feed("wms")},
		feed.Settings{Publisher: newService(t, db, 10), Partners: func(string) (bool, bool, error) { return false, true, nil },
			Poll: feed.PollConfig{URL: srv.URL + "/changes"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.Poll(context.Background())
	st := f.Status()
	if st.Cursor != "7" || st.LastError != "" {
		t.Fatalf("after a poll the cursor is %q (error %q), want 7: the reader read", st.Cursor, st.LastError)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"reader"`, `"reader_here"`, `"lease_until"`, `"lease_token"`} {
		if strings.Contains(string(b), field) {
			t.Errorf("the status of a Badger feed has %s: %s; want no lease fields", field, b)
		}
	}
}
