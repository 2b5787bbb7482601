package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// Several gateway instances on one database: subscriptions created or
// deleted on one are used by the others' publishing and delivery.

var event = webhooks.EventNames[0]

func TestSubscriptionCreatedOnOneInstanceIsPublishedByAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := webhookInstance(t, dsn, 0), webhookInstance(t, dsn, 0)
	rcv := newCountingReceiver(t)
	sub, _, err := b.Subscriptions().Create(context.Background(), "P1", rcv.URL+"/hook", event)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "A knows the subscription B created", func() bool {
		_, err := a.Subscriptions().Get("P1", sub.ID)
		return err == nil
	})
	n, err := a.Publish("P1", []webhooks.Event{{Name: event, Identifier: "o-1"}}, nil)
	if err != nil || n != 1 {
		t.Fatalf("A published %d deliveries (%v); want 1, for B's subscription", n, err)
	}
	runDue(t, a)
	if got := rcv.n.Load(); got != 1 {
		t.Fatalf("the receiver got %d requests from A; want 1", got)
	}
}

func TestSubscriptionDeletedOnOneInstanceIsNotPublishedByAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a := webhookInstance(t, dsn, 0)
	sub, _, err := a.Subscriptions().Create(context.Background(), "P1", newCountingReceiver(t).URL+"/hook", event)
	if err != nil {
		t.Fatal(err)
	}
	b := webhookInstance(t, dsn, 0) // reads the subscription at start
	if err := b.Subscriptions().Delete("P1", sub.ID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "A forgets the subscription B deleted", func() bool {
		subs, _ := a.Subscriptions().ForPartnerEvent("P1", event)
		return len(subs) == 0
	})
	if n, err := a.Publish("P1", []webhooks.Event{{Name: event, Identifier: "o-1"}}, nil); err != nil || n != 0 {
		t.Fatalf("A published %d deliveries (%v); want none, the subscription is deleted", n, err)
	}
}

// A delivery may reach an instance before the notification of its
// subscription does: the instance reloads the subscriptions rather than
// drop it as a deleted subscription's.
func TestADeliveryOfASubscriptionNotYetSeenIsSentNotDropped(t *testing.T) {
	pool := migratedPool(t)
	dsn := pool.Config().ConnString()
	a := webhookInstance(t, dsn, time.Hour) // no periodic reload during the test
	b := webhookInstance(t, dsn, 0)
	rcv := newCountingReceiver(t)
	// A subscription no notification announces, as if its notification
	// were still on its way to A.
	sub := webhooks.Subscription{ID: "sub_quiet", PartnerID: "P1", Event: event, NotificationURL: rcv.URL + "/hook", CreatedAt: t0}
	if _, err := pool.Exec(context.Background(), `INSERT INTO subscriptions (id, partner_id, event, notification_url, created_ns, unique_key)
VALUES ($1, $2, $3, $4, $5, $6)`, sub.ID, sub.PartnerID, sub.Event, sub.NotificationURL, nanos(sub.CreatedAt), []byte(webhooks.SubscriptionUniqueKey(sub))); err != nil {
		t.Fatal(err)
	}
	if err := b.Subscriptions().Refresh(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Publish("P1", []webhooks.Event{{Name: event, Identifier: "o-1"}}, nil); err != nil || n != 1 {
		t.Fatalf("B published %d deliveries (%v); want 1", n, err)
	}
	if _, err := a.Subscriptions().Get("P1", sub.ID); err == nil {
		t.Fatal("A knew the subscription before its delivery: the test needs one it has not seen")
	}
	runDue(t, a)
	if got := rcv.n.Load(); got != 1 {
		t.Fatalf("the receiver got %d requests from A; want 1 (the delivery was dropped as if its subscription were deleted)", got)
	}
}

// An instance of a gateway without the version (during a rollout) or an
// operator's SQL writes subscriptions without this code: the database
// itself raises the version, so the other instances still reload.
func TestASubscriptionWrittenOutsideTheGatewayChangesTheVersion(t *testing.T) {
	pool := migratedPool(t)
	ws := instance(t, pool.Config().ConnString()).Webhooks()
	before, err := ws.SubscriptionsVersion()
	if err != nil {
		t.Fatal(err)
	}
	sub := webhooks.Subscription{ID: "sub_sql", PartnerID: "P1", Event: event, NotificationURL: "https://receiver.example/hook", CreatedAt: t0}
	if _, err := pool.Exec(context.Background(), `INSERT INTO subscriptions (id, partner_id, event, notification_url, created_ns, unique_key)
VALUES ($1, $2, $3, $4, $5, $6)`, sub.ID, sub.PartnerID, sub.Event, sub.NotificationURL, nanos(sub.CreatedAt), []byte(webhooks.SubscriptionUniqueKey(sub))); err != nil {
		t.Fatal(err)
	}
	inserted, err := ws.SubscriptionsVersion()
	if err != nil || inserted == before {
		t.Fatalf("the version after an INSERT is %d (%v), before it %d; want it changed", inserted, err, before)
	}
	if _, err := pool.Exec(context.Background(), "DELETE FROM subscriptions WHERE id = $1", sub.ID); err != nil {
		t.Fatal(err)
	}
	if deleted, err := ws.SubscriptionsVersion(); err != nil || deleted == inserted || deleted == before {
		t.Fatalf("the version after a DELETE is %d (%v), before it %d; want a new one", deleted, err, inserted)
	}
}
