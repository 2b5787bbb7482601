package portal

import (
	"errors"
	"time"
)

// ErrNotFound is what a Store answers for a link, session or record that
// is not there (never stored, expired and pruned, or already taken).
var ErrNotFound = errors.New("not found")

// Store keeps the portal's sign-in links, sessions and audit log. A backend
// (storage/badgerstore, storage/pgstore) implements it; the rules (hashing,
// single use, expiry, limits) stay in this package. Every write is durable
// when it returns nil.
type Store interface {
	LinkStore
	SessionStore
	AuditStore
}

// LinkStore keeps sign-in links by id; only a hash of a link's secret is
// stored.
type LinkStore interface {
	PutLink(l LinkRecord) error
	// Link returns the link id, or ErrNotFound.
	Link(id string) (LinkRecord, error)
	// DeleteLink deletes the link id; ErrNotFound when it is not there, so
	// of two callers taking the same link only one succeeds.
	DeleteLink(id string) error
	Links() ([]LinkRecord, error)
}

// SessionStore keeps sessions by id; only a hash of a session's secret is
// stored.
type SessionStore interface {
	PutSession(s SessionRecord) error
	// Session returns the session id, or ErrNotFound.
	Session(id string) (SessionRecord, error)
	// TouchSession sets the last use of session id; ErrNotFound when it is
	// not there (a revoked session is never brought back).
	TouchSession(id string, at time.Time) error
	// DeleteSession deletes session id; ErrNotFound when it is not there.
	DeleteSession(id string) error
	Sessions() ([]SessionRecord, error)
}

// AuditStore keeps the audit log.
type AuditStore interface {
	AppendAudit(r AuditRecord) error
	// Audit returns at most limit records at or after since, newest first;
	// only partner's when partner is not empty.
	Audit(partner string, since time.Time, limit int) ([]AuditRecord, error)
	// DeleteAuditBefore deletes the records older than t.
	DeleteAuditBefore(t time.Time) error
}

// LinkRecord is a stored sign-in link: the SHA-256 of its secret, never
// the secret.
type LinkRecord struct {
	ID      string    `json:"id"`
	Partner string    `json:"partner"`
	Hash    []byte    `json:"hash"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// SessionRecord is a stored session: the SHA-256 of its secret, never the
// secret. Idle is the idle limit it was created with: the session ends
// when it is unused for that long, or at Expires, whichever comes first.
type SessionRecord struct {
	ID       string        `json:"id"`
	Partner  string        `json:"partner"`
	Hash     []byte        `json:"hash"`
	Created  time.Time     `json:"created"`
	LastSeen time.Time     `json:"last_seen"`
	Expires  time.Time     `json:"expires"`
	Idle     time.Duration `json:"idle"`
	// Addr and UserAgent are where the session was opened from (shown to
	// the operator; the user agent is cut to 200 bytes).
	Addr      string `json:"addr,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
}

// AuditRecord is one entry of the audit log: who did what to which
// object. It never holds a secret.
type AuditRecord struct {
	At      time.Time `json:"at"`
	Partner string    `json:"partner"`
	// Actor is "operator" or "partner".
	Actor string `json:"actor"`
	// Session is the id of the partner's session (empty for the operator).
	Session string `json:"session,omitempty"`
	Action  string `json:"action"`
	// Target names the object acted on (a client id, a subscription id).
	Target string `json:"target,omitempty"`
	// Outcome is "ok" or what went wrong.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}
