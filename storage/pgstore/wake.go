package pgstore

import "context"

// Wakeups subscribes to WakeChannel, on the store's one listening
// connection, until ctx ends or the store closes. The returned channel
// (capacity 1, wake-ups coalesce) receives a value after each
// notification, and after each reconnection, since notifications sent
// while the connection was away are lost: a reader of the channel looks
// at the schedule when it receives. It returns once the LISTEN is in
// place, or the error that prevented it; later connection failures go to
// onError (may be nil) and the connection is reopened, backing off up to
// 5 s. The channel is closed when the subscription ends.
func (s *Store) Wakeups(ctx context.Context, onError func(error)) (<-chan struct{}, error) {
	if onError == nil {
		onError = func(error) {}
	}
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	err := s.subscribe(ctx, &subscription{
		channel:     WakeChannel,
		name:        "wake-up listener",
		notified:    func(string) { signal() },
		reconnected: signal,
		end:         func() { close(wake) },
		failed:      onError,
	})
	if err != nil {
		return nil, err
	}
	return wake, nil
}
