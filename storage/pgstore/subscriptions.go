package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// webhookStore implements webhooks.Storage.
type webhookStore struct{ s *Store }

func (ws *webhookStore) Subscriptions() ([]webhooks.Subscription, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ws.s.pool.Query(ctx, "SELECT id, partner_id, event, notification_url, created_ns FROM subscriptions ORDER BY id")
	out, err := pgx.CollectRows(rows, scanSubscription)
	if err != nil {
		return nil, fmt.Errorf("reading subscriptions: %w", err)
	}
	return out, nil
}

// SubscriptionsAt reads the subscriptions and their version in one
// statement, so in one snapshot: the version row joined to every
// subscription (one row of NULLs beside the version when there is none).
func (ws *webhookStore) SubscriptionsAt() ([]webhooks.Subscription, uint64, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ws.s.pool.Query(ctx, `SELECT v.version, s.id, coalesce(s.partner_id, ''), coalesce(s.event, ''),
	coalesce(s.notification_url, ''), s.created_ns
FROM subscriptions_version v LEFT JOIN subscriptions s ON true ORDER BY s.id`)
	var (
		out     []webhooks.Subscription
		ver     int64
		id      *string
		sub     webhooks.Subscription
		created *int64
	)
	_, err := pgx.ForEachRow(rows, []any{&ver, &id, &sub.PartnerID, &sub.Event, &sub.NotificationURL, &created}, func() error {
		if id != nil {
			sub.ID, sub.CreatedAt = *id, fromNanos(created)
			out = append(out, sub)
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading subscriptions: %w", unavailable(err))
	}
	return out, uint64(ver), nil
}

// SubscriptionsVersion reads the one row of subscriptions_version, which
// triggers raise in the transaction of every statement that writes
// subscriptions, once per statement (migrations 00006 and 00007): the
// subscription writes of all instances commit one at a time, as each holds
// the row's lock until it commits.
func (ws *webhookStore) SubscriptionsVersion() (uint64, error) {
	ctx, cancel := op()
	defer cancel()
	var ver int64
	if err := ws.s.pool.QueryRow(ctx, "SELECT version FROM subscriptions_version").Scan(&ver); err != nil {
		return 0, fmt.Errorf("reading the subscriptions' version: %w", unavailable(err))
	}
	return uint64(ver), nil
}

func scanSubscription(r pgx.CollectableRow) (webhooks.Subscription, error) {
	var sub webhooks.Subscription
	var created *int64
	err := r.Scan(&sub.ID, &sub.PartnerID, &sub.Event, &sub.NotificationURL, &created)
	sub.CreatedAt = fromNanos(created)
	return sub, err
}

// CreateSubscription serialises the creates of one partner with a
// transaction-scoped advisory lock on the partner, across every instance,
// so the uniqueness check and the limit hold under concurrent creates.
func (ws *webhookStore) CreateSubscription(ctx context.Context, sub webhooks.Subscription, limit int) (stored webhooks.Subscription, created bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	key := []byte(webhooks.SubscriptionUniqueKey(sub))
	err = ws.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('fulfilgate subscriptions of ' || $1, 0))", sub.PartnerID); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT id, partner_id, event, notification_url, created_ns FROM subscriptions WHERE unique_key = $1", key)
		existing, err := pgx.CollectRows(rows, scanSubscription)
		if err != nil {
			return err
		}
		if len(existing) > 0 {
			stored = existing[0]
			return nil
		}
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM subscriptions WHERE partner_id = $1", sub.PartnerID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return webhooks.ErrLimit
		}
		if _, err := tx.Exec(ctx, `INSERT INTO subscriptions (id, partner_id, event, notification_url, created_ns, unique_key)
VALUES ($1, $2, $3, $4, $5, $6)`, sub.ID, sub.PartnerID, sub.Event, sub.NotificationURL, nanos(sub.CreatedAt), key); err != nil {
			return err
		}
		stored, created = sub, true
		return notify(ctx, tx, changeSubscriptions)
	})
	if errors.Is(err, webhooks.ErrLimit) {
		return webhooks.Subscription{}, false, err
	}
	if err != nil {
		return webhooks.Subscription{}, false, fmt.Errorf("storing subscription: %w", unavailable(err))
	}
	return stored, created, nil
}

func (ws *webhookStore) DeleteSubscription(partnerID, id string) (webhooks.Subscription, error) {
	ctx, cancel := op()
	defer cancel()
	var gone []webhooks.Subscription
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM subscriptions WHERE id = $1 AND partner_id = $2
RETURNING id, partner_id, event, notification_url, created_ns`, id, partnerID)
		var err error
		if gone, err = pgx.CollectRows(rows, scanSubscription); err != nil || len(gone) == 0 {
			return err
		}
		return notify(ctx, tx, changeSubscriptions)
	})
	if err != nil {
		return webhooks.Subscription{}, fmt.Errorf("deleting subscription %s: %w", id, unavailable(err))
	}
	if len(gone) == 0 {
		return webhooks.Subscription{}, webhooks.ErrNotFound
	}
	return gone[0], nil
}

// RepairSubscriptions finds nothing to repair: the uniqueness index is the
// table's own constraint and the count is counted.
func (ws *webhookStore) RepairSubscriptions() (orphans, counts int, err error) { return 0, 0, nil }
