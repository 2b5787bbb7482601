package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// TestTheStoresComeBackAfterTheDatabaseWasAway: while the server is down,
// queueing fails with an error that says what failed (nothing is reported
// queued that is not); once it is back, the same stores, pool and listener
// work again without being reopened.
func TestTheStoresComeBackAfterTheDatabaseWasAway(t *testing.T) {
	c := pgtest.NewCluster(t)
	dsn := c.Database(t)
	pool := openPool(t, dsn)
	if _, err := Migrate(context.Background(), pool, false); err != nil {
		t.Fatal(err)
	}
	s := New(pool)
	wake := listening(t, s)
	q := s.Webhooks()
	if err := q.Enqueue([]webhooks.QueueEntry{due("whd_before", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "the delivery queued before the outage")

	if err := c.Halt(); err != nil {
		t.Fatal(err)
	}
	err := q.Enqueue([]webhooks.QueueEntry{due("whd_during", "P1", t0)}, nil)
	if err == nil || !strings.Contains(err.Error(), "queueing 1 deliveries") {
		t.Fatalf("Enqueue while the database is down: %v, want an error saying the deliveries were not queued", err)
	}
	if _, _, err := q.Depth(); err == nil {
		t.Fatal("Depth while the database is down succeeded, want an error")
	}
	sub := webhooks.Subscription{ID: "sub_during", PartnerID: "P1", Event: "label-status", NotificationURL: "https://receiver.example/hook", CreatedAt: t0}
	if _, _, err := q.CreateSubscription(context.Background(), sub, 10); !errors.Is(err, webhooks.ErrUnavailable) {
		t.Fatalf("CreateSubscription while the database is down: %v, want an error wrapping webhooks.ErrUnavailable (callers answer 503)", err)
	}
	if _, err := q.DeleteSubscription("P1", "sub_before"); !errors.Is(err, webhooks.ErrUnavailable) {
		t.Fatalf("DeleteSubscription while the database is down: %v, want an error wrapping webhooks.ErrUnavailable", err)
	}

	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "the listener reconnecting after the outage")
	if err := q.Enqueue([]webhooks.QueueEntry{due("whd_after", "P1", t0)}, nil); err != nil {
		t.Fatalf("Enqueue after the database came back: %v", err)
	}
	waitWake(t, wake, "the delivery queued after the outage")
	got := claim(t, s, t0, 10, time.Minute)
	if ids := ids(got); len(ids) != 2 || ids[0] != "whd_after" || ids[1] != "whd_before" {
		t.Fatalf("queued after the outage: %v, want whd_after and whd_before (whd_during was refused, not queued)", ids)
	}
}
