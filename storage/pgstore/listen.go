package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenOn opens a connection (not one of the pool's: it is held for as
// long as the listener runs) listening on channel.
func (s *Store) listenOn(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connecting the listener of %s: %w", channel, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("listening on %s: %w", channel, err)
	}
	return conn, nil
}

// listener is one LISTEN connection kept up until its context ends.
type listener struct {
	channel string
	name    string // names the listener in its errors
	// notified is called with each notification's payload; reconnected
	// after each reconnection (notifications sent while the listener was
	// away are lost); failed with each connection failure (may be nil).
	notified    func(payload string)
	reconnected func()
	failed      func(error)
}

// run waits for notifications on conn (listening on l.channel) until ctx
// ends. When the connection fails it reconnects, backing off from 100 ms
// up to 5 s.
func (l listener) run(ctx context.Context, s *Store, conn *pgx.Conn) {
	backoff := 100 * time.Millisecond
	for {
		for conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var err error
			if conn, err = s.listenOn(ctx, l.channel); err != nil {
				if ctx.Err() != nil {
					return
				}
				l.fail(err)
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			l.reconnected()
		}
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			l.notified(n.Payload)
			continue
		}
		conn.Close(context.WithoutCancel(ctx))
		conn = nil
		if ctx.Err() != nil {
			return
		}
		l.fail(fmt.Errorf("%s: %w", l.name, err))
	}
}

func (l listener) fail(err error) {
	if l.failed != nil {
		l.failed(err)
	}
}
