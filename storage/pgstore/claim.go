package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// claimDue leases due deliveries: the first n by position whose next
// attempt is before $1 and that nobody holds (no lease, or one that ran
// out by $2). FOR UPDATE SKIP LOCKED lets instances claiming at once take
// different rows without waiting for each other.
const claimDue = `WITH due AS (
	SELECT pos FROM deliveries
	WHERE pos < $1 AND (lease_until_ns IS NULL OR lease_until_ns <= $2)
	ORDER BY pos LIMIT $3
	FOR UPDATE SKIP LOCKED)
UPDATE deliveries d SET lease_owner = $4, lease_until_ns = $5
FROM due WHERE d.pos = due.pos
RETURNING d.pos, d.id, d.partner_id, d.subscription_id, d.record`

// Claim leases up to n deliveries due at now to this instance until
// now + lease and returns them in schedule order. Another instance's
// Claim skips them until the lease runs out; then they are due again, so a
// delivery claimed by an instance that died is attempted by another. The
// holder records each outcome with Settle (which ends the lease) or gives
// them back with Release.
func (s *Store) Claim(ctx context.Context, now time.Time, n int, lease time.Duration) ([]webhooks.QueueEntry, error) {
	if n <= 0 || lease <= 0 {
		return nil, errors.New("claiming deliveries: the batch size and the lease must be positive")
	}
	dueBefore := webhooks.SchedulePos(now.Add(time.Nanosecond), "")
	rows, _ := s.pool.Query(ctx, claimDue, dueBefore, now.UnixNano(), n, s.instance, now.Add(lease).UnixNano())
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (webhooks.QueueEntry, error) {
		var e webhooks.QueueEntry
		err := r.Scan(&e.Pos, &e.ID, &e.PartnerID, &e.SubscriptionID, &e.Record)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("claiming due deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b webhooks.QueueEntry) int { return bytes.Compare(a.Pos, b.Pos) })
	return out, nil
}

// Release gives back this instance's leases of the deliveries at
// positions (when it stops before attempting them): they are due again at
// once for every instance.
func (s *Store) Release(ctx context.Context, positions [][]byte) error {
	if len(positions) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE deliveries SET lease_owner = NULL, lease_until_ns = NULL
WHERE pos = ANY($1) AND lease_owner = $2`, positions, s.instance)
		if err != nil {
			return err
		}
		return notifyWake(ctx, tx, int(tag.RowsAffected()))
	})
	if err != nil {
		return fmt.Errorf("releasing %d claimed deliveries: %w", len(positions), err)
	}
	return nil
}
