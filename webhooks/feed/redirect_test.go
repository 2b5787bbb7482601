package feed

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A feed that answers with a redirect is a failed poll with a message that
// says so: the reader never follows it, so neither the configured secret
// header nor a Referer reaches wherever the redirect points, and the
// cursor does not move.
func TestFeedRedirectIsAPollErrorAndNotFollowed(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		db := openDB(t, t.TempDir())
		var elsewhere atomic.Int64
		var leaked atomic.Value
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			elsewhere.Add(1)
			leaked.Store(r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Referer"))
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"changes":[],"next":"99"}`))
		}))
		wms := httptest.NewServer(http.RedirectHandler(other.URL+"/steal", code))
		pc := PollConfig{URL: wms.URL + "/wms/changes", Header: http.Header{"X-Api-Key": {"feed-secret"}}}
		f := testFeed(t, db, &recPublisher{db: db}, pc)
		if w := f.Poll(bg); w <= 0 {
			t.Errorf("%d: poll wait %v, want a back-off (a failed poll)", code, w)
		}
		if n := elsewhere.Load(); n != 0 {
			t.Errorf("%d: the redirect was followed (%d requests elsewhere, saw %q)", code, n, leaked.Load())
		}
		st := f.Status()
		if !strings.Contains(st.LastError, "redirect") || !strings.Contains(st.LastError, "not followed") ||
			st.Cursor != "" || st.ConsecutiveErrors != 1 {
			t.Errorf("%d: status %+v, want a poll error saying the redirect was not followed, cursor unchanged", code, st)
		}
		if strings.Contains(st.LastError, "feed-secret") {
			t.Errorf("%d: the error shows the secret header: %q", code, st.LastError)
		}
		wms.Close()
		other.Close()
	}
}

// The reader's transport is its own, with no proxy: a proxy named by the
// environment (HTTP_PROXY, HTTPS_PROXY) would see the feed's secret header
// and could answer anything.
func TestFeedClientUsesNoProxyFromTheEnvironment(t *testing.T) {
	tr, ok := httpClient.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("feed client transport is %T, want an explicit *http.Transport", httpClient.Transport)
	}
	if tr.Proxy != nil {
		t.Fatal("feed client transport has a Proxy function (e.g. http.ProxyFromEnvironment), want none")
	}
	if tr == http.DefaultTransport {
		t.Fatal("feed client shares http.DefaultTransport")
	}
	if httpClient.CheckRedirect == nil {
		t.Fatal("feed client follows redirects (no CheckRedirect)")
	}
}
