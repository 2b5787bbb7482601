package pgstore_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Two gateway instances on one database: B takes a partner's subscription
// writes, A reads the WMS feed and never hears B's change notifications
// (as if they were still on their way). A change A reads after B committed
// a create or a delete is fanned out with it all the same.

// deafStorage is a shared storage whose change notifications never
// arrive: an instance on it learns of other instances' subscription
// writes only from what it reads in the database.
type deafStorage struct{ webhooks.Storage }

func (deafStorage) Changes(ctx context.Context) (<-chan webhooks.Change, error) {
	ch := make(chan webhooks.Change)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

// deafReader opens instance a on dsn: its webhook service on a deafStorage
// (no periodic reload either) and its feed reader of the warehouse's feed
// (not started: the test polls).
func deafReader(t *testing.T, dsn string, w *warehouse) *instance {
	t.Helper()
	c := pgstore.NewTestClock(start)
	i := pgstore.OpenTestInstance(t, dsn, func(o *webhooks.Options) {
		o.Storage, o.RefreshInterval, o.Clock = deafStorage{o.Storage}, time.Hour, c.Now
	})
	f, err := feed.New(feed.Options{Name: "wms", Store: i.Store.Feed("wms"), Clock: c.Now},
		feed.Settings{Publisher: i.Hooks, Partners: knownPartner,
			Poll: feed.PollConfig{URL: w.srv.URL + "/wms/changes", PageSize: 100, Header: http.Header{readerHdr: {"a"}}, Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &instance{name: "a", pool: i.Pool, store: i.Store, hooks: i.Hooks, feed: f}
}

// queuedFor counts the queued deliveries of subscription id.
func queuedFor(t *testing.T, i *instance, id string) int {
	t.Helper()
	var n int
	if err := i.pool.QueryRow(context.Background(), "SELECT count(*) FROM deliveries WHERE subscription_id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAChangeReadAfterASubscriptionIsCreatedOnAnotherInstanceIsDeliveredToIt(t *testing.T) {
	dsn, w := pgstore.MigratedDatabase(t), newWarehouse(t)
	a := deafReader(t, dsn, w)
	b := pgstore.OpenTestInstance(t, dsn, nil)

	sub, created, err := b.Hooks.Subscriptions().Create(context.Background(), partner, hookURL, webhooks.EventOutboundStatus)
	if err != nil || !created {
		t.Fatalf("creating the subscription on B: created %v, %v", created, err)
	}
	if _, err := a.hooks.Subscriptions().Get(partner, sub.ID); err == nil {
		t.Fatal("A knew B's subscription before reading the change: the test needs an index that has not heard of it")
	}
	w.outbounds(1)
	pollUntilCaughtUp(t, a, 5)
	if n := queuedFor(t, a, sub.ID); n != 1 {
		t.Fatalf("A queued %d deliveries for the subscription B created before A read the change; want 1", n)
	}
}

func TestAChangeReadAfterASubscriptionIsDeletedOnAnotherInstanceIsNotDeliveredToIt(t *testing.T) {
	dsn, w := pgstore.MigratedDatabase(t), newWarehouse(t)
	b := pgstore.OpenTestInstance(t, dsn, nil)
	gone, _, err := b.Hooks.Subscriptions().Create(context.Background(), partner, hookURL, webhooks.EventOutboundStatus)
	if err != nil {
		t.Fatal(err)
	}
	a := deafReader(t, dsn, w) // loads the subscription at start
	kept, _, err := a.hooks.Subscriptions().Create(context.Background(), partner, hookURL+"/kept", webhooks.EventOutboundStatus)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Hooks.Subscriptions().Delete(partner, gone.ID); err != nil {
		t.Fatalf("deleting the subscription on B: %v", err)
	}
	if _, err := a.hooks.Subscriptions().Get(partner, gone.ID); err != nil {
		t.Fatal("A forgot B's subscription before reading the change: the test needs an index that has not heard of the delete")
	}
	w.outbounds(1)
	pollUntilCaughtUp(t, a, 5)
	if n := queuedFor(t, a, gone.ID); n != 0 {
		t.Errorf("A queued %d deliveries for the subscription B deleted before A read the change; want none", n)
	}
	if n := queuedFor(t, a, kept.ID); n != 1 {
		t.Errorf("A queued %d deliveries for the subscription still there; want 1 (the change was fanned out)", n)
	}
}
