package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// WakeChannel is the LISTEN/NOTIFY channel told (on commit) when
// deliveries are queued or queued again, so instances waiting for work
// look at the schedule at once rather than at their next poll.
const WakeChannel = "fulfilgate_deliveries"

// enqueueChunk is how many entries one INSERT carries.
const enqueueChunk = 5000

const insertDeliveries = `INSERT INTO deliveries (pos, id, partner_id, subscription_id, record)
SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::bytea[])
ON CONFLICT (pos) DO UPDATE SET id = excluded.id, partner_id = excluded.partner_id,
	subscription_id = excluded.subscription_id, record = excluded.record, lease_owner = NULL, lease_until_ns = NULL`

// Enqueue commits entries and with in one transaction (PostgreSQL's
// transactions have no size limit to split them at).
func (ws *webhookStore) Enqueue(entries []webhooks.QueueEntry, with webhooks.TxWrites) error {
	var apply func(context.Context, pgx.Tx) error
	if with != nil {
		w, ok := with.(txWrites)
		if !ok {
			return fmt.Errorf("queueing deliveries: writes of backend %q given to a %s queue", with.Backend(), Backend)
		}
		apply = w.apply
	}
	ctx, cancel := op()
	defer cancel()
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		if err := insertEntries(ctx, tx, entries); err != nil {
			return err
		}
		if apply != nil {
			if err := apply(ctx, tx); err != nil {
				return err
			}
		}
		return notifyWake(ctx, tx, len(entries))
	})
	if err != nil {
		return fmt.Errorf("queueing %d deliveries: %w", len(entries), err)
	}
	return nil
}

// insertEntries inserts (or replaces, at the same position) entries; of
// entries at the same position the last wins.
func insertEntries(ctx context.Context, tx pgx.Tx, entries []webhooks.QueueEntry) error {
	last := make(map[string]int, len(entries))
	for i, e := range entries {
		last[string(e.Pos)] = i
	}
	for start := 0; start < len(entries); start += enqueueChunk {
		chunk := entries[start:min(start+enqueueChunk, len(entries))]
		var pos, rec [][]byte
		var ids, partners, subs []string
		for i, e := range chunk {
			if last[string(e.Pos)] != start+i {
				continue
			}
			pos, ids, partners, subs, rec = append(pos, e.Pos), append(ids, e.ID), append(partners, e.PartnerID),
				append(subs, e.SubscriptionID), append(rec, e.Record)
		}
		if _, err := tx.Exec(ctx, insertDeliveries, pos, ids, partners, subs, rec); err != nil {
			return err
		}
	}
	return nil
}

// notifyWake tells the listeners of WakeChannel, on commit, that n
// deliveries were queued.
func notifyWake(ctx context.Context, tx pgx.Tx, n int) error {
	if n == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", WakeChannel)
	return err
}

// settleSQL are the statements of each kind of settlement ($1 the
// position, $2 this instance). A settlement applies only to a row that is
// still queued and not leased to another instance: when this instance's
// lease ran out and another claimed the delivery, the other's outcome is
// the one recorded (the delivery may have been attempted twice: at least
// once, never lost). A retry or a death writes its new row only if the old
// one was removed.
const (
	settleMine  = "pos = $1 AND (lease_owner IS NULL OR lease_owner = $2)"
	settleDone  = "DELETE FROM deliveries WHERE " + settleMine
	settleRetry = `WITH gone AS (DELETE FROM deliveries WHERE ` + settleMine + ` RETURNING 1)
INSERT INTO deliveries (pos, id, partner_id, subscription_id, record)
SELECT $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM gone)
ON CONFLICT (pos) DO UPDATE SET id = excluded.id, partner_id = excluded.partner_id,
	subscription_id = excluded.subscription_id, record = excluded.record, lease_owner = NULL, lease_until_ns = NULL`
	settleRetryInPlace = "UPDATE deliveries SET record = $3, lease_owner = NULL, lease_until_ns = NULL WHERE " + settleMine
	settleDelivered    = `WITH gone AS (DELETE FROM deliveries WHERE ` + settleMine + ` RETURNING 1)
INSERT INTO delivered (subscription_id, pos, id, partner_id, record)
SELECT $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM gone)
ON CONFLICT (subscription_id, pos) DO UPDATE SET record = excluded.record`
	// trimDelivered keeps subscription $1's latest $2 delivered records.
	// Only the transaction that gets the subscription's trim lock trims:
	// instances settling the same subscription at once would otherwise
	// delete the same rows in different orders and deadlock, failing the
	// settlement. A skipped trim is done by the subscription's next one.
	trimDelivered = `WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('fulfilgate delivered of ' || $1, 0)) AS got)
DELETE FROM delivered WHERE (SELECT got FROM lock) AND subscription_id = $1 AND pos IN (
	SELECT pos FROM delivered WHERE subscription_id = $1 ORDER BY pos DESC OFFSET $2)`
	settleDead = `WITH gone AS (DELETE FROM deliveries WHERE ` + settleMine + ` RETURNING 1)
INSERT INTO dead_letters (id, partner_id, subscription_id, record, expires_ns)
SELECT $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM gone)
ON CONFLICT (id) DO UPDATE SET partner_id = excluded.partner_id, subscription_id = excluded.subscription_id,
	record = excluded.record, expires_ns = excluded.expires_ns`
)

// Settle commits the whole batch in one transaction: every settlement is
// recorded, or none is.
func (ws *webhookStore) Settle(batch []webhooks.Settlement, done []bool) error {
	if len(batch) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	me := ws.s.instance
	retries := 0
	keep := map[string]int{} // subscriptions given delivered records: how many they keep
	for _, st := range batch {
		e := st.Entry
		switch st.Kind {
		case webhooks.SettleDone:
			if e.Record != nil {
				b.Queue(settleDelivered, st.Pos, me, e.SubscriptionID, e.Pos, e.ID, e.PartnerID, e.Record)
				keep[e.SubscriptionID] = max(st.Keep, 1)
			} else {
				b.Queue(settleDone, st.Pos, me)
			}
		case webhooks.SettleRetry:
			retries++
			if bytes.Equal(st.Pos, e.Pos) {
				b.Queue(settleRetryInPlace, st.Pos, me, e.Record)
			} else {
				b.Queue(settleRetry, st.Pos, me, e.Pos, e.ID, e.PartnerID, e.SubscriptionID, e.Record)
			}
		case webhooks.SettleDead:
			b.Queue(settleDead, st.Pos, me, e.ID, e.PartnerID, e.SubscriptionID, e.Record, st.Expires.UnixNano())
		default:
			return fmt.Errorf("settling deliveries: unknown settlement kind %d", st.Kind)
		}
	}
	for _, sub := range slices.Sorted(maps.Keys(keep)) {
		b.Queue(trimDelivered, sub, keep[sub])
	}
	ctx, cancel := op()
	defer cancel()
	err := ws.s.tx(ctx, func(tx pgx.Tx) error {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return notifyWake(ctx, tx, retries)
	})
	if err != nil {
		return fmt.Errorf("recording %d delivery outcomes: %w", len(batch), err)
	}
	for i := range batch {
		done[i] = true
	}
	return nil
}

// Quarantine moves the rows at positions to quarantined_deliveries.
func (ws *webhookStore) Quarantine(positions [][]byte) (int, error) {
	ctx, cancel := op()
	defer cancel()
	tag, err := ws.s.pool.Exec(ctx, `WITH moved AS (DELETE FROM deliveries WHERE pos = ANY($1) RETURNING pos, record)
INSERT INTO quarantined_deliveries (pos, record, quarantined_ns) SELECT pos, record, $2 FROM moved
ON CONFLICT (pos) DO UPDATE SET record = excluded.record, quarantined_ns = excluded.quarantined_ns`,
		positions, time.Now().UnixNano())
	if err != nil {
		return 0, fmt.Errorf("setting %d undecodable deliveries aside: %w", len(positions), err)
	}
	return int(tag.RowsAffected()), nil
}

func (ws *webhookStore) Depth() (queued, dead int64, err error) {
	ctx, cancel := op()
	defer cancel()
	err = ws.s.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM deliveries), (SELECT count(*) FROM dead_letters)").Scan(&queued, &dead)
	if err != nil {
		return 0, 0, fmt.Errorf("counting deliveries: %w", err)
	}
	return queued, dead, nil
}
