package pgstore

import (
	"context"

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

func (s *Store) wakeLoop(ctx context.Context, conn *pgx.Conn, wake chan struct{}, onError func(error)) {
	defer close(wake)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	listener{
		channel:     WakeChannel,
		name:        "wake-up listener",
		notified:    func(string) { signal() },
		reconnected: signal,
		failed:      onError,
	}.run(ctx, s, conn)
}
