package storagetest

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// version reads st's SubscriptionsVersion, failing t on error.
func version(t *testing.T, st webhooks.Storage) uint64 {
	t.Helper()
	v, err := st.SubscriptionsVersion()
	if err != nil {
		t.Fatalf("SubscriptionsVersion: %v", err)
	}
	return v
}

var subscriptionVersionBehaviours = []Behaviour{
	{"subscriptions/SubscriptionsAt returns the subscriptions with their version", func(t *testing.T, b Backend) {
		for _, s := range []webhooks.Subscription{sub("sub_1", "P1", "https://example.com/a"), sub("sub_2", "P1", "https://example.com/b")} {
			if _, _, err := b.Webhooks.CreateSubscription(ctx, s, 10); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Webhooks.DeleteSubscription("P1", "sub_1"); err != nil {
			t.Fatal(err)
		}
		all, v, err := b.Webhooks.SubscriptionsAt()
		if err != nil || len(all) != 1 || all[0] != sub("sub_2", "P1", "https://example.com/b") {
			t.Fatalf("SubscriptionsAt() = %+v, %v; want [sub_2]", all, err)
		}
		if now := version(t, b.Webhooks); v != now {
			t.Fatalf("SubscriptionsAt's version %d, SubscriptionsVersion %d with nothing written between; want the same", v, now)
		}
		none, _, err := b.Reopen(t).Webhooks.SubscriptionsAt()
		if err != nil || len(none) != 1 {
			t.Fatalf("SubscriptionsAt() after a restart = %+v, %v; want [sub_2]", none, err)
		}
	}},
	{"subscriptions/every create and delete of another instance changes the version", func(t *testing.T, b Backend) {
		if b.Peer == nil {
			// One process: its index is told of each of its writes; the
			// version has nothing to say and is 0.
			if _, _, err := b.Webhooks.CreateSubscription(ctx, sub("sub_1", "P1", "https://example.com/a"), 10); err != nil {
				t.Fatal(err)
			}
			if v := version(t, b.Webhooks); v != 0 {
				t.Fatalf("a backend one process opens has version %d after a create; want 0", v)
			}
			return
		}
		peer := b.Peer(t)
		v0 := version(t, b.Webhooks)
		if _, _, err := peer.Webhooks.CreateSubscription(ctx, sub("sub_1", "P1", "https://example.com/a"), 10); err != nil {
			t.Fatal(err)
		}
		v1 := version(t, b.Webhooks)
		if v1 == v0 {
			t.Fatalf("the version is %d before and after another instance's create; want it changed", v0)
		}
		all, at, err := b.Webhooks.SubscriptionsAt()
		if err != nil || len(all) != 1 || at != v1 {
			t.Fatalf("SubscriptionsAt() after another instance's create = %+v at %d, %v; want [sub_1] at %d", all, at, err, v1)
		}
		if _, err := peer.Webhooks.DeleteSubscription("P1", "sub_1"); err != nil {
			t.Fatal(err)
		}
		if v2 := version(t, b.Webhooks); v2 == v1 || v2 == v0 {
			t.Fatalf("the version after another instance's delete is %d (before the create %d, after it %d); want a new one", v2, v0, v1)
		}
	}},
}
