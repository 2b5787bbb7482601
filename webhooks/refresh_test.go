package webhooks

import (
	"context"
	"testing"
)

// Refresh reloads what another instance sharing the storage wrote; the
// test writes to the storage behind the service's back, as that instance
// would.
func TestRefreshBringsAndForgetsSubscriptionsWrittenBehindTheServicesBack(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := newService(t, testOptions(db, newFakeClock()))
	url := newReceiver(t, always(200)).URL + "/hook"
	kept, _, err := s.Subscriptions().Create(context.Background(), "P1", url, EventNames[0])
	if err != nil {
		t.Fatal(err)
	}
	other := Subscription{ID: "sub_other", PartnerID: "P1", Event: EventNames[1], NotificationURL: url, CreatedAt: kept.CreatedAt}
	if _, _, err := db.CreateSubscription(context.Background(), other, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteSubscription("P1", kept.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Subscriptions().Refresh(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscriptions().Get("P1", other.ID); err != nil {
		t.Fatalf("after Refresh the subscription stored behind the service's back is unknown: %v", err)
	}
	if _, err := s.Subscriptions().Get("P1", kept.ID); err == nil {
		t.Fatal("after Refresh the subscription deleted behind the service's back is still known")
	}
}
