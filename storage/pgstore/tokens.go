package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// tokenStore implements tokens.Store.
type tokenStore struct{ s *Store }

func (ts *tokenStore) Pepper(generate func() ([]byte, error)) ([]byte, error) {
	ctx, cancel := op()
	defer cancel()
	const get = "SELECT value FROM gateway_secrets WHERE name = 'pepper'"
	var p []byte
	err := ts.s.pool.QueryRow(ctx, get).Scan(&p)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("reading the pepper: %w", err)
	}
	fresh, err := generate()
	if err != nil {
		return nil, err
	}
	// Instances starting at once may each generate one: the first stored
	// wins and every one returns it.
	if _, err := ts.s.pool.Exec(ctx, "INSERT INTO gateway_secrets (name, value) VALUES ('pepper', $1) ON CONFLICT (name) DO NOTHING", fresh); err != nil {
		return nil, fmt.Errorf("storing the pepper: %w", err)
	}
	if err := ts.s.pool.QueryRow(ctx, get).Scan(&p); err != nil {
		return nil, fmt.Errorf("reading the pepper: %w", err)
	}
	return p, nil
}

func (ts *tokenStore) Partners() ([]tokens.PartnerRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ts.s.pool.Query(ctx, "SELECT id, consolidation, webhook_key, disabled, created_ns FROM partners ORDER BY id")
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.PartnerRecord, error) {
		var p tokens.PartnerRecord
		var created *int64
		err := r.Scan(&p.ID, &p.Consolidation, &p.WebhookKey, &p.Disabled, &created)
		p.Created = fromNanos(created)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading partners: %w", err)
	}
	return out, nil
}

const putPartner = `INSERT INTO partners (id, consolidation, webhook_key, disabled, created_ns) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO UPDATE SET consolidation = excluded.consolidation, webhook_key = excluded.webhook_key,
	disabled = excluded.disabled, created_ns = excluded.created_ns`

const putClient = `INSERT INTO clients (id, partner_id, secret_hash, secret_version, opaque_version, active, created_ns,
	secret_hint, prev_secret_hash, prev_until_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (id) DO UPDATE SET partner_id = excluded.partner_id, secret_hash = excluded.secret_hash,
	secret_version = excluded.secret_version, opaque_version = excluded.opaque_version, active = excluded.active,
	created_ns = excluded.created_ns, secret_hint = excluded.secret_hint, prev_secret_hash = excluded.prev_secret_hash,
	prev_until_ns = excluded.prev_until_ns`

// UpdateClient replaces a stored client of c.Partner, in one statement
// that writes nothing when it is gone.
func (ts *tokenStore) UpdateClient(c tokens.ClientRecord) error {
	ctx, cancel := op()
	defer cancel()
	err := ts.s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE clients SET secret_hash = $3, secret_version = $4, opaque_version = $5, active = $6,
	created_ns = $7, secret_hint = $8, prev_secret_hash = $9, prev_until_ns = $10 WHERE id = $1 AND partner_id = $2`,
			c.ID, c.Partner, c.Hash, c.Version, c.OpaqueVersion, c.Active, nanos(c.Created), c.Hint, c.PrevHash, nanos(c.PrevUntil))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return tokens.ErrClientGone
		}
		return notify(ctx, tx, changePartners)
	})
	if err != nil {
		return fmt.Errorf("storing client %s: %w", c.ID, err)
	}
	return nil
}

// lockClientsOf takes the transaction-scoped advisory lock of partner $1's
// clients, under which every instance creates them (CreateClient,
// CreatePartner) and deletes them with the partner (DeletePartner). Its
// key is apart from the subscriptions' lock (another text before the
// partner).
const lockClientsOf = "SELECT pg_advisory_xact_lock(hashtextextended('fulfilgate clients of ' || $1, 0))"

// insertClient inserts c, a new client: an error wrapping
// tokens.ErrExists when a client of its id is stored.
func insertClient(ctx context.Context, tx pgx.Tx, c tokens.ClientRecord) error {
	tag, err := tx.Exec(ctx, createClient, c.ID, c.Partner, c.Hash, c.Version, c.OpaqueVersion, c.Active, nanos(c.Created),
		c.Hint, c.PrevHash, nanos(c.PrevUntil))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("client %s %w", c.ID, tokens.ErrExists)
	}
	return nil
}

// createClient inserts a client, nothing when its id is stored.
const createClient = `INSERT INTO clients (id, partner_id, secret_hash, secret_version, opaque_version, active, created_ns,
	secret_hint, prev_secret_hash, prev_until_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`

func queuePartner(b *pgx.Batch, p tokens.PartnerRecord) {
	b.Queue(putPartner, p.ID, p.Consolidation, p.WebhookKey, p.Disabled, nanos(p.Created))
}

func queueClient(b *pgx.Batch, c tokens.ClientRecord) {
	b.Queue(putClient, c.ID, c.Partner, c.Hash, c.Version, c.OpaqueVersion, c.Active, nanos(c.Created),
		c.Hint, c.PrevHash, nanos(c.PrevUntil))
}

// batch sends b in a transaction, with the notification of a change of
// kind.
func (s *Store) batch(what, kind string, b *pgx.Batch) error {
	ctx, cancel := op()
	defer cancel()
	queueNotify(b, kind)
	err := s.tx(ctx, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// CreatePartner runs under the lock of the partner's client creates and
// deletes (see CreateClient), so that of two instances creating the same
// partner one stores it and the other is refused, and a client another
// instance created for a deleted partner of the same id (an orphan) is
// gone before the new partner's clients are stored.
func (ts *tokenStore) CreatePartner(p tokens.PartnerRecord, clients ...tokens.ClientRecord) error {
	ctx, cancel := op()
	defer cancel()
	err := ts.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockClientsOf, p.ID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, createPartner, p.ID, p.Consolidation, p.WebhookKey, p.Disabled, nanos(p.Created))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("partner %s %w", p.ID, tokens.ErrExists)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM clients WHERE partner_id = $1", p.ID); err != nil {
			return err
		}
		for _, c := range clients {
			if err := insertClient(ctx, tx, c); err != nil {
				return err
			}
		}
		return notify(ctx, tx, changePartners)
	})
	if errors.Is(err, tokens.ErrExists) {
		return err
	}
	if err != nil {
		return fmt.Errorf("storing partner %s: %w", p.ID, unavailable(err))
	}
	return nil
}

// createPartner inserts a partner, nothing when its id is stored.
const createPartner = `INSERT INTO partners (id, consolidation, webhook_key, disabled, created_ns) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO NOTHING`

func (ts *tokenStore) PutPartner(p tokens.PartnerRecord) error {
	b := &pgx.Batch{}
	queuePartner(b, p)
	return ts.s.batch("storing partner "+p.ID, changePartners, b)
}

func (ts *tokenStore) DeletePartner(id string, clientIDs []string) error {
	b := &pgx.Batch{}
	b.Queue("DELETE FROM partners WHERE id = $1", id)
	// Under the lock of the partner's client creates (see CreateClient),
	// so one under way is stored before this deletes it.
	b.Queue(lockClientsOf, id)
	b.Queue("DELETE FROM clients WHERE id = ANY($1) OR partner_id = $2", clientIDs, id)
	return ts.s.batch("deleting partner "+id, changePartners, b)
}

func (ts *tokenStore) StaticWebhookKeys() ([]tokens.StaticKeyRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ts.s.pool.Query(ctx, "SELECT partner_id, webhook_key, created_ns, rotated_ns FROM static_webhook_keys ORDER BY partner_id")
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.StaticKeyRecord, error) {
		var k tokens.StaticKeyRecord
		var created, rotated *int64
		err := r.Scan(&k.Partner, &k.WebhookKey, &created, &rotated)
		k.Created, k.Rotated = fromNanos(created), fromNanos(rotated)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading static partners' webhook keys: %w", err)
	}
	return out, nil
}

func (ts *tokenStore) PutStaticWebhookKeys(recs []tokens.StaticKeyRecord) error {
	b := &pgx.Batch{}
	for _, k := range recs {
		b.Queue(`INSERT INTO static_webhook_keys (partner_id, webhook_key, created_ns, rotated_ns) VALUES ($1, $2, $3, $4)
ON CONFLICT (partner_id) DO UPDATE SET webhook_key = excluded.webhook_key, created_ns = excluded.created_ns,
	rotated_ns = excluded.rotated_ns`, k.Partner, k.WebhookKey, nanos(k.Created), nanos(k.Rotated))
	}
	return ts.s.batch("storing static partners' webhook keys", changePartners, b)
}

func (ts *tokenStore) Clients() ([]tokens.ClientRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ts.s.pool.Query(ctx, `SELECT id, partner_id, secret_hash, secret_version, opaque_version, active, created_ns,
	secret_hint, prev_secret_hash, prev_until_ns
FROM clients ORDER BY id`)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.ClientRecord, error) {
		var c tokens.ClientRecord
		var created, prevUntil *int64
		err := r.Scan(&c.ID, &c.Partner, &c.Hash, &c.Version, &c.OpaqueVersion, &c.Active, &created,
			&c.Hint, &c.PrevHash, &prevUntil)
		c.Created, c.PrevUntil = fromNanos(created), fromNanos(prevUntil)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading clients: %w", err)
	}
	return out, nil
}

func (ts *tokenStore) PutClient(c tokens.ClientRecord) error {
	b := &pgx.Batch{}
	queueClient(b, c)
	return ts.s.batch("storing client "+c.ID, changePartners, b)
}

// CreateClient serialises the creates of one partner's clients with a
// transaction-scoped advisory lock on the partner, across every instance,
// so the count and the insert are one step. The lock's key is apart from
// the subscriptions' (another text before the partner).
func (ts *tokenStore) CreateClient(c tokens.ClientRecord, max int) error {
	ctx, cancel := op()
	defer cancel()
	var n int
	err := ts.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockClientsOf, c.Partner); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM clients WHERE partner_id = $1", c.Partner).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return tokens.ErrClientLimit
		}
		if err := insertClient(ctx, tx, c); err != nil {
			return err
		}
		return notify(ctx, tx, changePartners)
	})
	if errors.Is(err, tokens.ErrClientLimit) {
		return fmt.Errorf("%d clients of partner %s stored, at most %d: %w", n, c.Partner, max, err)
	}
	if err != nil {
		return fmt.Errorf("storing client %s: %w", c.ID, err)
	}
	return nil
}

func (ts *tokenStore) SigningKeys() ([]tokens.KeyRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ts.s.pool.Query(ctx, "SELECT kid, alg, material, created_ns, retired_ns FROM signing_keys ORDER BY kid")
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.KeyRecord, error) {
		var k tokens.KeyRecord
		var created, retired *int64
		err := r.Scan(&k.KID, &k.Alg, &k.Material, &created, &retired)
		k.Created, k.Retired = fromNanos(created), fromNanos(retired)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading signing keys: %w", err)
	}
	return out, nil
}

func (ts *tokenStore) UpdateSigningKeys(put []tokens.KeyRecord, del []string) error {
	b := &pgx.Batch{}
	for _, k := range put {
		b.Queue(`INSERT INTO signing_keys (kid, alg, material, created_ns, retired_ns) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (kid) DO UPDATE SET alg = excluded.alg, material = excluded.material, created_ns = excluded.created_ns,
	retired_ns = excluded.retired_ns`, k.KID, k.Alg, k.Material, nanos(k.Created), nanos(k.Retired))
	}
	if len(del) > 0 {
		b.Queue("DELETE FROM signing_keys WHERE kid = ANY($1)", del)
	}
	return ts.s.batch("storing signing keys", changeKeys, b)
}

func (ts *tokenStore) AddStaticWebhookKeys(recs []tokens.StaticKeyRecord) error {
	b := &pgx.Batch{}
	for _, k := range recs {
		b.Queue(`INSERT INTO static_webhook_keys (partner_id, webhook_key, created_ns, rotated_ns) VALUES ($1, $2, $3, $4)
ON CONFLICT (partner_id) DO NOTHING`, k.Partner, k.WebhookKey, nanos(k.Created), nanos(k.Rotated))
	}
	return ts.s.batch("storing static partners' webhook keys", changePartners, b)
}

// ReplaceCurrentKey serialises key creations across every instance with a
// transaction-scoped advisory lock, so the check of the current key and
// the write are one step.
func (ts *tokenStore) ReplaceCurrentKey(prev string, next tokens.KeyRecord) error {
	ctx, cancel := op()
	defer cancel()
	err := ts.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('fulfilgate signing keys', 0))"); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT kid, alg, created_ns, retired_ns FROM signing_keys WHERE alg = $1", next.Alg)
		recs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.KeyRecord, error) {
			var k tokens.KeyRecord
			var created, retired *int64
			err := r.Scan(&k.KID, &k.Alg, &created, &retired)
			k.Created, k.Retired = fromNanos(created), fromNanos(retired)
			return k, err
		})
		if err != nil {
			return err
		}
		if cur, ok := tokens.CurrentKey(recs, next.Alg); ok != (prev != "") || cur.KID != prev {
			return tokens.ErrKeyChanged
		}
		if _, err := tx.Exec(ctx, "UPDATE signing_keys SET retired_ns = $1 WHERE alg = $2 AND retired_ns IS NULL AND kid <> $3",
			nanos(next.Created), next.Alg, next.KID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO signing_keys (kid, alg, material, created_ns, retired_ns) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (kid) DO UPDATE SET alg = excluded.alg, material = excluded.material, created_ns = excluded.created_ns,
	retired_ns = excluded.retired_ns`, next.KID, next.Alg, next.Material, nanos(next.Created), nanos(next.Retired)); err != nil {
			return err
		}
		return notify(ctx, tx, changeKeys)
	})
	if errors.Is(err, tokens.ErrKeyChanged) {
		return err
	}
	if err != nil {
		return fmt.Errorf("storing a new signing key: %w", err)
	}
	return nil
}

func (ts *tokenStore) DeleteClient(id string) error {
	b := &pgx.Batch{}
	b.Queue("DELETE FROM clients WHERE id = $1", id)
	return ts.s.batch("deleting client "+id, changePartners, b)
}

func (ts *tokenStore) ClientUsage() (map[string]time.Time, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ts.s.pool.Query(ctx, "SELECT client_id, last_used_ns FROM client_usage")
	out := map[string]time.Time{}
	var id string
	var at int64
	_, err := pgx.ForEachRow(rows, []any{&id, &at}, func() error {
		out[id] = time.Unix(0, at).UTC()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the clients' last use: %w", err)
	}
	return out, nil
}

func (ts *tokenStore) TouchClient(id string, at time.Time) error {
	ctx, cancel := op()
	defer cancel()
	_, err := ts.s.pool.Exec(ctx, `INSERT INTO client_usage (client_id, last_used_ns) VALUES ($1, $2)
ON CONFLICT (client_id) DO UPDATE SET last_used_ns = GREATEST(client_usage.last_used_ns, excluded.last_used_ns)`, id, at.UnixNano())
	if err != nil {
		return fmt.Errorf("noting client %s's last use: %w", id, err)
	}
	return nil
}
