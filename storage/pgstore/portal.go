package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/portal"
)

// portalStore implements portal.Store.
type portalStore struct{ s *Store }

// Portal returns the portal's store (the same at every call).
func (s *Store) Portal() portal.Store { return s.portal }

// exec runs one statement; when mustHit is set, a statement that changes
// no row is portal.ErrNotFound.
func (ps *portalStore) exec(what string, mustHit bool, sql string, args ...any) error {
	ctx, cancel := op()
	defer cancel()
	tag, err := ps.s.pool.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if mustHit && tag.RowsAffected() == 0 {
		return portal.ErrNotFound
	}
	return nil
}

func (ps *portalStore) PutLink(l portal.LinkRecord) error {
	return ps.exec("storing a portal link", false, `INSERT INTO portal_links (id, partner_id, hash, created_ns, expires_ns)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET partner_id = excluded.partner_id, hash = excluded.hash,
	created_ns = excluded.created_ns, expires_ns = excluded.expires_ns`,
		l.ID, l.Partner, l.Hash, l.Created.UnixNano(), l.Expires.UnixNano())
}

const selectLink = "SELECT id, partner_id, hash, created_ns, expires_ns FROM portal_links"

func scanLink(r pgx.CollectableRow) (portal.LinkRecord, error) {
	var l portal.LinkRecord
	var created, expires int64
	err := r.Scan(&l.ID, &l.Partner, &l.Hash, &created, &expires)
	l.Created, l.Expires = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	return l, err
}

func (ps *portalStore) Link(id string) (portal.LinkRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ps.s.pool.Query(ctx, selectLink+" WHERE id = $1", id)
	l, err := pgx.CollectExactlyOneRow(rows, scanLink)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, portal.ErrNotFound
	}
	if err != nil {
		return l, fmt.Errorf("reading a portal link: %w", err)
	}
	return l, nil
}

func (ps *portalStore) DeleteLink(id string) error {
	return ps.exec("deleting a portal link", true, "DELETE FROM portal_links WHERE id = $1", id)
}

func (ps *portalStore) Links() ([]portal.LinkRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ps.s.pool.Query(ctx, selectLink+" ORDER BY id")
	out, err := pgx.CollectRows(rows, scanLink)
	if err != nil {
		return nil, fmt.Errorf("reading portal links: %w", err)
	}
	return out, nil
}

func (ps *portalStore) PutSession(r portal.SessionRecord) error {
	return ps.exec("storing a portal session", false, `INSERT INTO portal_sessions
(id, partner_id, hash, created_ns, last_seen_ns, expires_ns, idle_ns, addr, user_agent)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO UPDATE SET partner_id = excluded.partner_id,
	hash = excluded.hash, created_ns = excluded.created_ns, last_seen_ns = excluded.last_seen_ns,
	expires_ns = excluded.expires_ns, idle_ns = excluded.idle_ns, addr = excluded.addr, user_agent = excluded.user_agent`,
		r.ID, r.Partner, r.Hash, r.Created.UnixNano(), r.LastSeen.UnixNano(), r.Expires.UnixNano(), int64(r.Idle), r.Addr, r.UserAgent)
}

const selectSession = "SELECT id, partner_id, hash, created_ns, last_seen_ns, expires_ns, idle_ns, addr, user_agent FROM portal_sessions"

func scanSession(row pgx.CollectableRow) (portal.SessionRecord, error) {
	var r portal.SessionRecord
	var created, seen, expires, idle int64
	err := row.Scan(&r.ID, &r.Partner, &r.Hash, &created, &seen, &expires, &idle, &r.Addr, &r.UserAgent)
	r.Created, r.LastSeen, r.Expires = time.Unix(0, created).UTC(), time.Unix(0, seen).UTC(), time.Unix(0, expires).UTC()
	r.Idle = time.Duration(idle)
	return r, err
}

func (ps *portalStore) Session(id string) (portal.SessionRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ps.s.pool.Query(ctx, selectSession+" WHERE id = $1", id)
	r, err := pgx.CollectExactlyOneRow(rows, scanSession)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, portal.ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("reading a portal session: %w", err)
	}
	return r, nil
}

func (ps *portalStore) TouchSession(id string, at time.Time) error {
	return ps.exec("noting a portal session's use", true, "UPDATE portal_sessions SET last_seen_ns = $2 WHERE id = $1", id, at.UnixNano())
}

func (ps *portalStore) DeleteSession(id string) error {
	return ps.exec("deleting a portal session", true, "DELETE FROM portal_sessions WHERE id = $1", id)
}

func (ps *portalStore) Sessions() ([]portal.SessionRecord, error) {
	ctx, cancel := op()
	defer cancel()
	rows, _ := ps.s.pool.Query(ctx, selectSession+" ORDER BY created_ns, id")
	out, err := pgx.CollectRows(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("reading portal sessions: %w", err)
	}
	return out, nil
}

func (ps *portalStore) AppendAudit(r portal.AuditRecord) error {
	return ps.exec("writing the portal audit log", false, `INSERT INTO portal_audit
(at_ns, partner_id, actor, session_id, action, target, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.At.UnixNano(), r.Partner, r.Actor, r.Session, r.Action, r.Target, r.Outcome, r.Detail)
}

func (ps *portalStore) Audit(partner string, since time.Time, limit int) ([]portal.AuditRecord, error) {
	ctx, cancel := op()
	defer cancel()
	var sinceNs int64
	if !since.IsZero() {
		sinceNs = since.UnixNano()
	}
	rows, _ := ps.s.pool.Query(ctx, `SELECT at_ns, partner_id, actor, session_id, action, target, outcome, detail
FROM portal_audit WHERE at_ns >= $1 AND ($2 = '' OR partner_id = $2) ORDER BY at_ns DESC, seq DESC LIMIT $3`,
		sinceNs, partner, limit)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (portal.AuditRecord, error) {
		var r portal.AuditRecord
		var at int64
		err := row.Scan(&at, &r.Partner, &r.Actor, &r.Session, &r.Action, &r.Target, &r.Outcome, &r.Detail)
		r.At = time.Unix(0, at).UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the portal audit log: %w", err)
	}
	return out, nil
}

func (ps *portalStore) DeleteAuditBefore(t time.Time) error {
	return ps.exec("pruning the portal audit log", false, "DELETE FROM portal_audit WHERE at_ns < $1", t.UnixNano())
}
