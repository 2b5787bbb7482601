package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// acquireLease takes the lease ($2 the instance, $3 until) when it is
// free, ran out by $4 (now) or is the instance's own (a renewal, which
// keeps the token); any other holder keeps it and nothing is returned.
const acquireLease = `INSERT INTO feed_leases AS l (feed, holder, until_ns, token) VALUES ($1, $2, $3, 1)
ON CONFLICT (feed) DO UPDATE SET
	token = CASE WHEN l.holder = excluded.holder THEN l.token ELSE l.token + 1 END,
	holder = excluded.holder, until_ns = excluded.until_ns
WHERE l.holder = excluded.holder OR l.holder IS NULL OR l.until_ns <= $4
RETURNING holder, until_ns, token`

// AcquireLease takes or renews the feed's lease for this Store's instance
// (Instance) until now+ttl; see feed.Leaser. Concurrent calls of several
// instances give the lease to one: the upsert locks the row.
func (fs *feedStore) AcquireLease(now time.Time, ttl time.Duration) (feed.Lease, error) {
	ctx, cancel := op()
	defer cancel()
	var holder *string
	var until, token int64
	err := fs.s.pool.QueryRow(ctx, acquireLease, fs.name, fs.s.instance, now.Add(ttl).UnixNano(), now.UnixNano()).
		Scan(&holder, &until, &token)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fs.s.pool.QueryRow(ctx, "SELECT holder, until_ns, token FROM feed_leases WHERE feed = $1", fs.name).
			Scan(&holder, &until, &token)
	}
	if err != nil {
		return feed.Lease{}, fmt.Errorf("feed %s: taking the lease: %w", fs.name, err)
	}
	l := feed.Lease{Until: time.Unix(0, until).UTC(), Token: uint64(token)}
	if holder != nil {
		l.Holder = *holder
		l.Held = *holder == fs.s.instance
	}
	return l, nil
}

// ReleaseLease frees the lease if this instance holds it.
func (fs *feedStore) ReleaseLease() error {
	ctx, cancel := op()
	defer cancel()
	if _, err := fs.s.pool.Exec(ctx, "UPDATE feed_leases SET holder = NULL, until_ns = 0 WHERE feed = $1 AND holder = $2",
		fs.name, fs.s.instance); err != nil {
		return fmt.Errorf("feed %s: releasing the lease: %w", fs.name, err)
	}
	return nil
}

// checkFence fails tx with feed.ErrLeaseLost unless this instance holds the
// feed's lease with token fence. The row stays share-locked until tx ends,
// so no other instance takes the lease over before this transaction has
// committed (its takeover waits, then reads the cursor committed here).
func (fs *feedStore) checkFence(ctx context.Context, tx pgx.Tx, fence uint64) error {
	var holder *string
	var token int64
	err := tx.QueryRow(ctx, "SELECT holder, token FROM feed_leases WHERE feed = $1 FOR SHARE", fs.name).Scan(&holder, &token)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("feed %s: the page was read under lease token %d and the feed has no lease: %w", fs.name, fence, feed.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("feed %s: checking the lease: %w", fs.name, err)
	}
	if holder == nil || *holder != fs.s.instance || uint64(token) != fence {
		now := "free"
		if holder != nil {
			now = "held by " + *holder
		}
		return fmt.Errorf("feed %s: the page was read under lease token %d; the lease is now %s with token %d: %w",
			fs.name, fence, now, token, feed.ErrLeaseLost)
	}
	return nil
}

// endLease frees the feed's lease whoever holds it.
func (fs *feedStore) endLease(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "UPDATE feed_leases SET holder = NULL, until_ns = 0 WHERE feed = $1", fs.name); err != nil {
		return fmt.Errorf("feed %s: ending the lease: %w", fs.name, err)
	}
	return nil
}

var _ feed.Leaser = (*feedStore)(nil)
