package feed

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// syncingPublisher is a recPublisher whose subscriptions other processes
// may change (SubscriptionSyncer): it records its calls in order and can
// be told to fail the sync.
type syncingPublisher struct {
	recPublisher
	smu     sync.Mutex
	calls   []string // "sync" and "publish", in order
	syncErr error
}

func (p *syncingPublisher) SyncSubscriptions() error {
	p.smu.Lock()
	defer p.smu.Unlock()
	p.calls = append(p.calls, "sync")
	return p.syncErr
}

func (p *syncingPublisher) Publish(partnerID string, events []webhooks.Event, with webhooks.TxWrites) (int, error) {
	p.smu.Lock()
	p.calls = append(p.calls, "publish")
	p.smu.Unlock()
	return p.recPublisher.Publish(partnerID, events, with)
}

func TestABatchSyncsTheSubscriptionsOnceBeforeItsEventsArePublished(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	for i := 1; i <= 4; i++ { // two partners: two publishes
		ff.add(chg(fmt.Sprint("c", i), []string{"cons", "plain"}[i%2], "label", fmt.Sprint("l", i), "status-changed"))
	}
	pub := &syncingPublisher{recPublisher: recPublisher{db: db}}
	f := testFeed(t, db, pub, PollConfig{URL: u, PageSize: 10})
	f.Poll(bg)
	if got := strings.Join(pub.calls, " "); got != "sync publish publish" {
		t.Fatalf("calls for a page of two partners: %q; want one sync, then the two publishes", got)
	}
}

func TestABatchWhoseSubscriptionsCannotBeSyncedIsReadAgainLater(t *testing.T) {
	db := openDB(t, t.TempDir())
	ff, u := startFake(t)
	ff.add(chg("c1", "plain", "label", "l1", "status-changed"))
	pub := &syncingPublisher{recPublisher: recPublisher{db: db}, syncErr: errors.New("database away")}
	f := testFeed(t, db, pub, PollConfig{URL: u, PageSize: 10})
	if w := f.Poll(bg); w <= 0 {
		t.Fatalf("wait after a failed sync = %v, want a back-off", w)
	}
	if st := f.Status(); st.Cursor != "" || !strings.Contains(st.LastError, "database away") {
		t.Fatalf("status after a failed sync %+v; want no cursor stored and the error shown", st)
	}
	if got := queued(t, db); len(got) != 0 {
		t.Fatalf("queued %v with subscriptions that could not be synced; want nothing", got)
	}
	pub.smu.Lock()
	pub.syncErr = nil
	pub.smu.Unlock()
	drain(t, f, 5)
	if got := queued(t, db); len(got) != 1 {
		t.Fatalf("queued %v after the sync works again; want the change's one event", got)
	}
}
