package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// soleInstanceLock is the key of the session advisory lock a gateway holds
// while it is the only instance allowed on the database.
const soleInstanceLock int64 = 0x66756c66696c6769 // "fulfilgi"

// ErrAnotherInstance is returned by LockSoleInstance when another gateway
// instance holds the database.
var ErrAnotherInstance = errors.New("another gateway instance is using this PostgreSQL database")

// LockSoleInstance takes the database for this gateway alone, until
// release is called or the process ends (the lock is a session advisory
// lock on a connection of its own, so the server frees it when the
// process dies). Until the webhook dispatcher and the feeds claim their
// work (Claim, leases), two instances on one database would both attempt
// the same deliveries and read the same feeds; the second is refused with
// ErrAnotherInstance instead.
func (s *Store) LockSoleInstance(ctx context.Context) (release func() error, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connecting to take the instance lock: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", soleInstanceLock).Scan(&got); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("taking the instance lock: %w", err)
	}
	if !got {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w: one instance per database until several are supported; stop the other or give this one another database", ErrAnotherInstance)
	}
	return func() error {
		// Ending the session releases the lock.
		if err := conn.Close(context.Background()); err != nil {
			return fmt.Errorf("releasing the instance lock: %w", err)
		}
		return nil
	}, nil
}
