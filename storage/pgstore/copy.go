package pgstore

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// LoadDead inserts the dead letters in one transaction.
func (ws *webhookStore) LoadDead(letters []webhooks.DeadLetter) error {
	if len(letters) == 0 {
		return nil
	}
	ctx, cancel := op()
	defer cancel()
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, d := range letters {
			b.Queue(`INSERT INTO dead_letters (id, partner_id, subscription_id, record, expires_ns)
VALUES ($1, $2, $3, $4, $5)`,
				d.ID, d.PartnerID, d.SubscriptionID, d.Record, d.Expires.UnixNano())
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("loading %d dead letters: %w", len(letters), err)
	}
	return nil
}

// FeedNames lists the feeds with a cursor, an unexpired seen marker or a
// rejected change.
func (s *Store) FeedNames() ([]string, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := s.pool.Query(ctx, `SELECT feed FROM feed_cursors
UNION SELECT feed FROM feed_seen WHERE seen_until_ns > $1
UNION SELECT feed FROM feed_rejected
ORDER BY 1`, time.Now().UnixNano())
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing the feeds: %w", err)
	}
	return names, nil
}

// ScanSeen reads the feed's unexpired seen markers in change id order.
func (fs *feedStore) ScanSeen(fn func(changeID string, until time.Time) error) error {
	ctx, cancel := op()
	defer cancel()
	rows, _ := fs.s.pool.Query(ctx, `SELECT change_id, seen_until_ns FROM feed_seen
WHERE feed = $1 AND seen_until_ns > $2 ORDER BY change_id`, fs.name, time.Now().UnixNano())
	var id string
	var until int64
	_, err := pgx.ForEachRow(rows, []any{&id, &until}, func() error {
		return fn(id, time.Unix(0, until).UTC())
	})
	if err != nil {
		return fmt.Errorf("feed %s: reading seen changes: %w", fs.name, err)
	}
	return nil
}
