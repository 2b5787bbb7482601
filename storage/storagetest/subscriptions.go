package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

func sub(id, partner, url string) webhooks.Subscription {
	return webhooks.Subscription{ID: id, PartnerID: partner, NotificationURL: url,
		Event: webhooks.EventReceiptReceived, CreatedAt: t0}
}

var subscriptionBehaviours = []Behaviour{
	{"subscriptions/a created subscription survives a restart", func(t *testing.T, b Backend) {
		got, created, err := b.Webhooks.CreateSubscription(ctx, sub("sub_1", "P1", "https://example.com/a"), 10)
		if err != nil || !created || got.ID != "sub_1" {
			t.Fatalf("CreateSubscription = %+v, %v, %v; want sub_1 created", got, created, err)
		}
		all, err := b.Reopen(t).Webhooks.Subscriptions()
		if err != nil || len(all) != 1 || all[0] != got {
			t.Fatalf("Subscriptions() after a restart = %+v, %v; want [%+v]", all, err, got)
		}
	}},
	{"subscriptions/the same partner, event and URL give the existing one", func(t *testing.T, b Backend) {
		first, _, err := b.Webhooks.CreateSubscription(ctx, sub("sub_1", "P1", "https://example.com/a"), 10)
		if err != nil {
			t.Fatal(err)
		}
		// Scheme and host differ in case only: the same URL.
		got, created, err := b.Webhooks.CreateSubscription(ctx, sub("sub_2", "P1", "HTTPS://EXAMPLE.com/a"), 10)
		if err != nil || created || got != first {
			t.Fatalf("second create = %+v, created %v, %v; want the first one, not created", got, created, err)
		}
		other, created, err := b.Webhooks.CreateSubscription(ctx, sub("sub_3", "P2", "https://example.com/a"), 10)
		if err != nil || !created || other.ID != "sub_3" {
			t.Fatalf("another partner's create = %+v, created %v, %v; want a new subscription", other, created, err)
		}
	}},
	{"subscriptions/the limit per partner holds", func(t *testing.T, b Backend) {
		for i := range 2 {
			if _, _, err := b.Webhooks.CreateSubscription(ctx, sub(fmt.Sprint("sub_", i), "P1", fmt.Sprint("https://example.com/", i)), 2); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := b.Webhooks.CreateSubscription(ctx, sub("sub_x", "P1", "https://example.com/x"), 2); !errors.Is(err, webhooks.ErrLimit) {
			t.Fatalf("third create with limit 2: %v, want ErrLimit", err)
		}
		if _, err := b.Webhooks.DeleteSubscription("P1", "sub_0"); err != nil {
			t.Fatal(err)
		}
		if _, created, err := b.Webhooks.CreateSubscription(ctx, sub("sub_x", "P1", "https://example.com/x"), 2); err != nil || !created {
			t.Fatalf("create after a delete freed a place: created %v, %v; want created", created, err)
		}
	}},
	{"subscriptions/concurrent identical creates store one", func(t *testing.T, b Backend) {
		const n = 8
		var wg sync.WaitGroup
		ids := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, _, err := b.Webhooks.CreateSubscription(ctx, sub(fmt.Sprint("sub_", i), "P1", "https://example.com/same"), 100)
				ids[i], errs[i] = s.ID, err
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("create %d gave %q, %v; want every create to give %q", i, ids[i], errs[i], ids[0])
			}
		}
		all, _ := b.Webhooks.Subscriptions()
		if len(all) != 1 {
			t.Fatalf("%d subscriptions stored, want 1", len(all))
		}
	}},
	{"subscriptions/delete is the owner's only", func(t *testing.T, b Backend) {
		s := sub("sub_1", "P1", "https://example.com/a")
		if _, _, err := b.Webhooks.CreateSubscription(ctx, s, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Webhooks.DeleteSubscription("P2", "sub_1"); !errors.Is(err, webhooks.ErrNotFound) {
			t.Fatalf("another partner's delete: %v, want ErrNotFound", err)
		}
		if _, err := b.Webhooks.DeleteSubscription("P1", "sub_missing"); !errors.Is(err, webhooks.ErrNotFound) {
			t.Fatalf("delete of a missing id: %v, want ErrNotFound", err)
		}
		got, err := b.Webhooks.DeleteSubscription("P1", "sub_1")
		if err != nil || got != s {
			t.Fatalf("owner's delete = %+v, %v; want %+v", got, err, s)
		}
		r := b.Reopen(t)
		all, _ := r.Webhooks.Subscriptions()
		if len(all) != 0 {
			t.Fatalf("after delete and restart: %+v, want none", all)
		}
		again, created, err := r.Webhooks.CreateSubscription(ctx, sub("sub_2", "P1", "https://example.com/a"), 10)
		if err != nil || !created || again.ID != "sub_2" {
			t.Fatalf("create again after delete = %+v, %v, %v; want a new subscription", again, created, err)
		}
	}},
	{"subscriptions/a consistent store needs no repair", func(t *testing.T, b Backend) {
		if _, _, err := b.Webhooks.CreateSubscription(ctx, sub("sub_1", "P1", "https://example.com/a"), 10); err != nil {
			t.Fatal(err)
		}
		orphans, counts, err := b.Webhooks.RepairSubscriptions()
		if err != nil || orphans != 0 || counts != 0 {
			t.Fatalf("RepairSubscriptions() = %d, %d, %v; want nothing to repair", orphans, counts, err)
		}
	}},
}
