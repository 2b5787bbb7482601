package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deadPage is how many dead letters ScanDead fetches at a time.
const deadPage = 500

func (ws *webhookStore) ScanDead(fn func(record []byte) (bool, error)) error {
	var afterExp int64 = -1 << 63
	afterID := ""
	for {
		page, err := ws.deadPage(afterExp, afterID)
		if err != nil {
			return err
		}
		for _, d := range page {
			more, err := fn(d.record)
			if err != nil || !more {
				return err
			}
		}
		if len(page) < deadPage {
			return nil
		}
		afterExp, afterID = page[len(page)-1].expires, page[len(page)-1].id
	}
}

type deadRow struct {
	expires int64
	id      string
	record  []byte
}

// deadPage reads the dead letters after (expires, id), soonest expiry
// first.
func (ws *webhookStore) deadPage(afterExp int64, afterID string) ([]deadRow, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ws.s.pool.Query(ctx, `SELECT expires_ns, id, record FROM dead_letters
WHERE (expires_ns, id) > ($1, $2) ORDER BY expires_ns, id LIMIT $3`, afterExp, afterID, deadPage)
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deadRow, error) {
		var d deadRow
		err := r.Scan(&d.expires, &d.id, &d.record)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading dead letters: %w", err)
	}
	return page, nil
}

func (ws *webhookStore) GetDead(id string) ([]byte, error) {
	ctx, cancel := op()
	defer cancel()
	var rec []byte
	err := ws.s.pool.QueryRow(ctx, "SELECT record FROM dead_letters WHERE id = $1", id).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, webhooks.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading dead letter %s: %w", id, err)
	}
	return rec, nil
}

// Revive moves each dead letter still there (with the expiry it was
// settled with) back to the queue, all in one transaction.
func (ws *webhookStore) Revive(items []webhooks.Revival) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	b := &pgx.Batch{}
	n := 0
	for _, it := range items {
		e := it.Entry
		b.Queue(`WITH gone AS (DELETE FROM dead_letters WHERE id = $1 AND expires_ns = $2 RETURNING 1)
INSERT INTO deliveries (pos, id, partner_id, subscription_id, record)
SELECT $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM gone)
ON CONFLICT (pos) DO UPDATE SET id = excluded.id, partner_id = excluded.partner_id,
	subscription_id = excluded.subscription_id, record = excluded.record, lease_owner = NULL, lease_until_ns = NULL`,
			it.ID, it.Expires.UnixNano(), e.Pos, e.ID, e.PartnerID, e.SubscriptionID, e.Record).Exec(func(tag pgconn.CommandTag) error {
			n += int(tag.RowsAffected())
			return nil
		})
	}
	ctx, cancel := op()
	defer cancel()
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return notifyWake(ctx, tx, n)
	})
	if err != nil {
		return 0, fmt.Errorf("queueing %d dead letters again: %w", len(items), err)
	}
	return n, nil
}

func (ws *webhookStore) PurgeDead(now time.Time, limit int) (int, error) {
	ctx, cancel := op()
	defer cancel()
	tag, err := ws.s.pool.Exec(ctx, `DELETE FROM dead_letters WHERE id IN (
	SELECT id FROM dead_letters WHERE expires_ns <= $1 ORDER BY expires_ns, id LIMIT $2)`, now.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("purging expired dead letters: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
