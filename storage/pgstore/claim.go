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

// claimDue leases due deliveries: of each partner with queued deliveries
// (found by a skip scan of the (partner_id, pos) index), not in $4, the
// first $3 by position whose next attempt is before $1 and that nobody
// holds (no lease, or one that ran out by $2); of those, the first $5 by
// position. FOR UPDATE SKIP LOCKED lets instances claiming at once take
// different rows without waiting for each other. Reading each partner on
// its own keeps one partner's backlog at the head of the schedule from
// hiding the others' deliveries behind it.
const claimDue = `WITH RECURSIVE partners(id) AS (
	(SELECT partner_id FROM deliveries ORDER BY partner_id LIMIT 1)
	UNION ALL
	SELECT (SELECT d.partner_id FROM deliveries d WHERE d.partner_id > p.id ORDER BY d.partner_id LIMIT 1)
	FROM partners p WHERE p.id IS NOT NULL
), due AS (
	SELECT c.pos FROM partners p CROSS JOIN LATERAL (
		SELECT d.pos FROM deliveries d
		WHERE d.partner_id = p.id AND d.pos < $1 AND (d.lease_until_ns IS NULL OR d.lease_until_ns <= $2)
		ORDER BY d.pos LIMIT $3
		FOR UPDATE SKIP LOCKED) c
	WHERE p.id IS NOT NULL AND p.id <> ALL($4::text[])
	ORDER BY c.pos LIMIT $5)
UPDATE deliveries d SET lease_owner = $6, lease_until_ns = $7
FROM due WHERE d.pos = due.pos
RETURNING d.pos, d.id, d.partner_id, d.subscription_id, d.record`

// nextDue is the position of the first delivery due at or after $1.
const nextDue = `SELECT pos FROM deliveries WHERE pos >= $1 ORDER BY pos LIMIT 1`

// Claim leases due deliveries to this instance (webhooks.Claimer). Another
// instance's Claim skips them until the lease runs out; then they are due
// again, so a delivery claimed by an instance that died is attempted by
// another. The holder records each outcome with Settle (which ends the
// lease), extends the lease with Renew, or gives it back with Release.
func (s *Store) Claim(ctx context.Context, req webhooks.ClaimRequest) ([]webhooks.QueueEntry, time.Time, error) {
	if req.Max <= 0 || req.PerPartner <= 0 || req.Lease <= 0 {
		return nil, time.Time{}, errors.New("claiming deliveries: the batch sizes and the lease must be positive")
	}
	skip := req.Skip
	if skip == nil {
		skip = []string{}
	}
	dueBefore := webhooks.SchedulePos(req.Now.Add(time.Nanosecond), "")
	b := &pgx.Batch{}
	var out []webhooks.QueueEntry
	b.Queue(claimDue, dueBefore, req.Now.UnixNano(), req.PerPartner, skip, req.Max, s.instance,
		req.Now.Add(req.Lease).UnixNano()).Query(func(rows pgx.Rows) error {
		var err error
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (webhooks.QueueEntry, error) {
			var e webhooks.QueueEntry
			err := r.Scan(&e.Pos, &e.ID, &e.PartnerID, &e.SubscriptionID, &e.Record)
			return e, err
		})
		return err
	})
	var next time.Time
	b.Queue(nextDue, dueBefore).QueryRow(func(row pgx.Row) error {
		var pos []byte
		switch err := row.Scan(&pos); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		next, _, _ = webhooks.ParseSchedulePos(pos)
		return nil
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, time.Time{}, fmt.Errorf("claiming due deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b webhooks.QueueEntry) int { return bytes.Compare(a.Pos, b.Pos) })
	return out, next, nil
}

// Renew extends this instance's leases of the deliveries at positions
// until until and returns how many it extended.
func (s *Store) Renew(ctx context.Context, positions [][]byte, until time.Time) (int, error) {
	if len(positions) == 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `UPDATE deliveries SET lease_until_ns = $1 WHERE pos = ANY($2) AND lease_owner = $3`,
		until.UnixNano(), positions, s.instance)
	if err != nil {
		return 0, fmt.Errorf("renewing the leases of %d claimed deliveries: %w", len(positions), err)
	}
	return int(tag.RowsAffected()), nil
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

// The webhook store claims through its Store: it is what the webhook
// service is given, and what it asks for webhooks.Claimer.

func (ws *webhookStore) Claim(ctx context.Context, req webhooks.ClaimRequest) ([]webhooks.QueueEntry, time.Time, error) {
	return ws.s.Claim(ctx, req)
}

func (ws *webhookStore) Renew(ctx context.Context, positions [][]byte, until time.Time) (int, error) {
	return ws.s.Renew(ctx, positions, until)
}

func (ws *webhookStore) Release(ctx context.Context, positions [][]byte) error {
	return ws.s.Release(ctx, positions)
}

func (ws *webhookStore) Wakeups(ctx context.Context, onError func(error)) (<-chan struct{}, error) {
	return ws.s.Wakeups(ctx, onError)
}

var _ webhooks.Claimer = (*webhookStore)(nil)
