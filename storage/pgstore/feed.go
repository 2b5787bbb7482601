package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// feedStore implements feed.Store for one feed.
type feedStore struct {
	s    *Store
	name string
}

func (fs *feedStore) Cursor() (string, error) {
	ctx, cancel := op()
	defer cancel()
	var c *string
	err := fs.s.pool.QueryRow(ctx, "SELECT cursor FROM feed_cursors WHERE feed = $1", fs.name).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && c == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("feed %s: reading the cursor: %w", fs.name, err)
	}
	return *c, nil
}

func (fs *feedStore) Seen(ids []string) (map[string]bool, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := fs.s.pool.Query(ctx, `SELECT change_id FROM feed_seen
WHERE feed = $1 AND change_id = ANY($2) AND seen_until_ns > $3`, fs.name, ids, time.Now().UnixNano())
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("feed %s: reading seen changes: %w", fs.name, err)
	}
	out := make(map[string]bool, len(seen))
	for _, id := range seen {
		out[id] = true
	}
	return out, nil
}

func (fs *feedStore) Rejected() ([]feed.Rejected, uint64, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := fs.s.pool.Query(ctx, "SELECT rejected FROM feed_rejected WHERE feed = $1 ORDER BY seq", fs.name)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (feed.Rejected, error) {
		var b []byte
		var rej feed.Rejected
		if err := r.Scan(&b); err != nil {
			return rej, err
		}
		return rej, json.Unmarshal(b, &rej)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("feed %s: reading rejected changes: %w", fs.name, err)
	}
	var total int64
	err = fs.s.pool.QueryRow(ctx, "SELECT rejected_total FROM feed_cursors WHERE feed = $1", fs.name).Scan(&total)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("feed %s: reading the rejected total: %w", fs.name, err)
	}
	return out, uint64(total), nil
}

// PageWrites prepares w's writes: the lease check (Fence) first, then
// the end of the lease (EndLease), seen markers (upserted with their new
// expiry), rejected changes in their ring slots, the rejected total and
// the cursor.
func (fs *feedStore) PageWrites(w feed.PageWrites) webhooks.TxWrites {
	return txWrites{apply: func(ctx context.Context, tx pgx.Tx) error {
		if w.Fence != 0 {
			if err := fs.checkFence(ctx, tx, w.Fence); err != nil {
				return err
			}
		}
		if w.EndLease {
			if err := fs.endLease(ctx, tx); err != nil {
				return err
			}
		}
		if len(w.Seen) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO feed_seen (feed, change_id, seen_until_ns)
SELECT $1, id, $3 FROM unnest($2::text[]) AS id
ON CONFLICT (feed, change_id) DO UPDATE SET seen_until_ns = excluded.seen_until_ns`,
				fs.name, dedupe(w.Seen), w.SeenUntil.UnixNano()); err != nil {
				return fmt.Errorf("feed %s: marking changes seen: %w", fs.name, err)
			}
		}
		rs := w.Rejected
		if len(rs) > feed.MaxRejected {
			rs = rs[len(rs)-feed.MaxRejected:]
		}
		for _, r := range rs {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO feed_rejected (feed, slot, seq, rejected) VALUES ($1, $2, $3, $4)
ON CONFLICT (feed, slot) DO UPDATE SET seq = excluded.seq, rejected = excluded.rejected`,
				fs.name, int(r.Seq%feed.MaxRejected), int64(r.Seq), b); err != nil {
				return fmt.Errorf("feed %s: storing rejected changes: %w", fs.name, err)
			}
		}
		if len(w.Rejected) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO feed_cursors (feed, rejected_total) VALUES ($1, $2)
ON CONFLICT (feed) DO UPDATE SET rejected_total = excluded.rejected_total`, fs.name, int64(w.RejectedTotal)); err != nil {
				return fmt.Errorf("feed %s: storing the rejected total: %w", fs.name, err)
			}
		}
		if w.Cursor != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO feed_cursors (feed, cursor) VALUES ($1, $2)
ON CONFLICT (feed) DO UPDATE SET cursor = excluded.cursor`, fs.name, *w.Cursor); err != nil {
				return fmt.Errorf("feed %s: storing the cursor: %w", fs.name, err)
			}
		}
		return nil
	}}
}

// dedupe returns ids without repeats (an upsert may not touch a row
// twice).
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (fs *feedStore) Commit(w webhooks.TxWrites) error {
	tw, ok := w.(txWrites)
	if !ok {
		return fmt.Errorf("feed %s: writes of backend %q given to a %s store", fs.name, w.Backend(), Backend)
	}
	ctx, cancel := op()
	defer cancel()
	return fs.s.tx(ctx, func(tx pgx.Tx) error { return tw.apply(ctx, tx) })
}

func (fs *feedStore) ForgetSeen() error {
	ctx, cancel := op()
	defer cancel()
	if _, err := fs.s.pool.Exec(ctx, "DELETE FROM feed_seen WHERE feed = $1", fs.name); err != nil {
		return fmt.Errorf("feed %s: forgetting seen changes: %w", fs.name, err)
	}
	return nil
}
