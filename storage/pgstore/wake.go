package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wakeups listens on WakeChannel on a connection of its own until ctx
// ends. The returned channel (capacity 1, wake-ups coalesce) receives a
// value after each notification, and after each reconnection, since
// notifications sent while the listener was away are lost: a reader of the
// channel looks at the schedule when it receives. It returns once the
// first LISTEN is in place, or the error that prevented it; later
// connection failures go to onError (may be nil) and the listener
// reconnects, backing off up to 5 s. The channel is closed when ctx ends.
func (s *Store) Wakeups(ctx context.Context, onError func(error)) (<-chan struct{}, error) {
	conn, err := s.listenOn(ctx, WakeChannel)
	if err != nil {
		return nil, err
	}
	wake := make(chan struct{}, 1)
	go s.wakeLoop(ctx, conn, wake, onError)
	return wake, nil
}

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

func (s *Store) wakeLoop(ctx context.Context, conn *pgx.Conn, wake chan struct{}, onError func(error)) {
	defer close(wake)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	backoff := 100 * time.Millisecond
	for {
		for conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var err error
			if conn, err = s.listenOn(ctx, WakeChannel); err != nil {
				if ctx.Err() != nil {
					return
				}
				if onError != nil {
					onError(err)
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			signal()
		}
		_, err := conn.WaitForNotification(ctx)
		if err == nil {
			signal()
			continue
		}
		conn.Close(context.WithoutCancel(ctx))
		conn = nil
		if ctx.Err() != nil {
			return
		}
		if onError != nil {
			onError(fmt.Errorf("wake-up listener: %w", err))
		}
	}
}
