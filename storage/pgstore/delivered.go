package pgstore

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// deliveredPage is how many delivered records ScanDelivered fetches at a
// time.
const deliveredPage = 200

func (ws *webhookStore) ScanDelivered(sub string, fn func(record []byte) (bool, error)) error {
	var before []byte // nil: from the latest
	for {
		page, err := ws.deliveredPage(sub, before)
		if err != nil {
			return err
		}
		for _, r := range page {
			more, err := fn(r.record)
			if err != nil || !more {
				return err
			}
		}
		if len(page) < deliveredPage {
			return nil
		}
		before = page[len(page)-1].pos
	}
}

type deliveredRow struct {
	pos    []byte
	record []byte
}

// deliveredPage reads sub's delivered records before pos (nil: all), the
// latest first.
func (ws *webhookStore) deliveredPage(sub string, before []byte) ([]deliveredRow, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ws.s.pool.Query(ctx, `SELECT pos, record FROM delivered
WHERE subscription_id = $1 AND ($2::bytea IS NULL OR pos < $2) ORDER BY pos DESC LIMIT $3`, sub, before, deliveredPage)
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deliveredRow, error) {
		var d deliveredRow
		err := r.Scan(&d.pos, &d.record)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading delivered records of %s: %w", sub, err)
	}
	return page, nil
}

func (ws *webhookStore) TrimDelivered(sub string, keep int, before time.Time) (int, error) {
	ctx, cancel := op()
	defer cancel()
	// The subscription's trim lock (see trimDelivered) keeps this from
	// deadlocking with a settlement's trim.
	tag, err := ws.s.pool.Exec(ctx, `WITH lock AS (SELECT pg_advisory_xact_lock(hashtextextended('fulfilgate delivered of ' || $1, 0)))
DELETE FROM delivered WHERE (SELECT count(*) FROM lock) = 1 AND subscription_id = $1 AND (pos < $2 OR pos IN (
	SELECT pos FROM delivered WHERE subscription_id = $1 ORDER BY pos DESC OFFSET $3))`,
		sub, webhooks.SchedulePos(before, ""), max(keep, 0))
	if err != nil {
		return 0, fmt.Errorf("trimming delivered records of %s: %w", sub, err)
	}
	return int(tag.RowsAffected()), nil
}

func (ws *webhookStore) DeliveredSubscriptions() ([]string, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ws.s.pool.Query(ctx, "SELECT DISTINCT subscription_id FROM delivered")
	subs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing delivered records: %w", err)
	}
	return subs, nil
}

// LoadDelivered inserts the delivered records in one transaction.
func (ws *webhookStore) LoadDelivered(entries []webhooks.QueueEntry) error {
	if len(entries) == 0 {
		return nil
	}
	ctx, cancel := op()
	defer cancel()
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, e := range entries {
			b.Queue(`INSERT INTO delivered (subscription_id, pos, id, partner_id, record) VALUES ($1, $2, $3, $4, $5)`,
				e.SubscriptionID, e.Pos, e.ID, e.PartnerID, e.Record)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("loading %d delivered records: %w", len(entries), err)
	}
	return nil
}
