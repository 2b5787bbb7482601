package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

func TestUpkeepDeletesExpiredSeenMarkersOnly(t *testing.T) {
	s := New(migratedPool(t))
	if _, ok := s.Webhooks().(webhooks.Maintainer); !ok {
		t.Fatal("the webhook store is not a webhooks.Maintainer: expired seen markers would never be deleted")
	}
	now := time.Now()
	f := s.Feed("orders")
	for _, w := range []feed.PageWrites{
		{Seen: []string{"old-1", "old-2"}, SeenUntil: now.Add(-time.Minute)},
		{Seen: []string{"fresh"}, SeenUntil: now.Add(time.Hour)},
	} {
		if err := f.Commit(f.PageWrites(w)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PurgeExpiredSeen(context.Background(), now)
	if err != nil || n != 2 {
		t.Fatalf("PurgeExpiredSeen = %d, %v; want the 2 expired markers deleted", n, err)
	}
	var left []string
	rows, err := s.Pool().Query(context.Background(), "SELECT change_id FROM feed_seen ORDER BY change_id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		left = append(left, id)
	}
	if len(left) != 1 || left[0] != "fresh" {
		t.Fatalf("markers left: %v, want only fresh", left)
	}
}
