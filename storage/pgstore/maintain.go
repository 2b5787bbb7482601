package pgstore

import (
	"context"
	"fmt"
	"time"
)

// expiredSeenChunk is how many expired seen markers one statement deletes,
// so upkeep never holds long locks.
const expiredSeenChunk = 5000

// Maintain deletes the feeds' seen markers whose dedupe window has passed
// (Badger lets them expire by themselves; here they are rows), a chunk at
// a time until none is left or ctx ends. The webhook service calls it
// periodically (webhooks.Maintainer).
func (ws *webhookStore) Maintain(ctx context.Context) {
	if _, err := ws.s.PurgeExpiredSeen(ctx, time.Now()); err != nil && ctx.Err() == nil && ws.s.onError != nil {
		ws.s.onError(err) // and tried again at the next upkeep
	}
}

// PurgeExpiredSeen deletes the seen markers of every feed that expired at
// or before now and returns how many.
func (s *Store) PurgeExpiredSeen(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for ctx.Err() == nil {
		tag, err := s.pool.Exec(ctx, `DELETE FROM feed_seen WHERE (feed, change_id) IN (
	SELECT feed, change_id FROM feed_seen WHERE seen_until_ns <= $1 LIMIT $2)`, now.UnixNano(), expiredSeenChunk)
		if err != nil {
			return total, fmt.Errorf("deleting expired seen markers: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < expiredSeenChunk {
			return total, nil
		}
	}
	return total, ctx.Err()
}
