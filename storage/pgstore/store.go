package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
	"github.com/fulfilgate/fulfilgate/webhooks/feed"
)

// Backend is the name TxWrites of this backend give.
const Backend = "postgres"

// opTimeout bounds one storage operation (the seam's methods take no
// context): a database that stops answering fails the call rather than
// hanging it.
const opTimeout = 30 * time.Second

// Store holds the stores of one database, as one gateway instance. It does
// not own the pool: the caller closes the Store (its listening connection)
// and then the pool, after the services using the stores are closed. The
// schema must have been migrated (Migrate).
type Store struct {
	pool     *pgxpool.Pool
	instance string
	onError  func(error) // errors of background work; nil: dropped
	tokens   *tokenStore
	webhooks *webhookStore
	portal   *portalStore
	listener listener // the one LISTEN connection of Changes and Wakeups
	// listenTimeout bounds opening the listening connection (ListenTimeout).
	listenTimeout time.Duration
}

// New returns the stores of pool's database, as one gateway instance: the
// deliveries it claims are leased in its name (Instance).
func New(pool *pgxpool.Pool) *Store {
	s := &Store{pool: pool, instance: newInstanceID(), listenTimeout: opTimeout}
	s.tokens, s.webhooks, s.portal = &tokenStore{s}, &webhookStore{s}, &portalStore{s}
	return s
}

// OnError sets where the errors of background work (periodic upkeep) go,
// for the caller to log; it returns s. Set it before the stores are used.
func (s *Store) OnError(fn func(error)) *Store {
	s.onError = fn
	return s
}

// ListenTimeout sets how long opening the listening connection of Changes
// and Wakeups (connecting and its LISTENs) may take before it fails; it
// returns s. The default is the bound of every storage operation, 30 s;
// d <= 0 keeps it (the connect is never unbounded). Set it before the
// stores are used.
func (s *Store) ListenTimeout(d time.Duration) *Store {
	if d > 0 {
		s.listenTimeout = d
	}
	return s
}

// Instance is the name this store's claims are leased in: host, process
// and a random part, unique to each Store.
func (s *Store) Instance() string { return s.instance }

func newInstanceID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	var r [6]byte
	rand.Read(r[:]) // never fails
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Pool returns the connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tokens returns the token service's store (the same at every call).
func (s *Store) Tokens() tokens.Store { return s.tokens }

// Webhooks returns the webhook service's store (the same at every call).
func (s *Store) Webhooks() webhooks.Storage { return s.webhooks }

// Feed returns the store of feed name.
func (s *Store) Feed(name string) feed.Store { return &feedStore{s: s, name: name} }

// op is the context of one storage operation.
func op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// tx runs fn in a transaction, committed when fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// txWrites are this backend's webhooks.TxWrites: writes applied to a
// transaction.
type txWrites struct {
	apply func(ctx context.Context, tx pgx.Tx) error
}

func (txWrites) Backend() string { return Backend }

// nanos is t as Unix nanoseconds, NULL for the zero time.
func nanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

// fromNanos is the time of Unix nanoseconds n (UTC), the zero time for
// NULL.
func fromNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}
