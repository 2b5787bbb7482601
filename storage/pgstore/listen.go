package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenChannels are the channels a store's listening connection
// listens on: every channel the store has subscribers for.
var listenChannels = []string{ChangeChannel, WakeChannel}

// errClosed is the reason a subscription to a closed store fails.
var errClosed = errors.New("the PostgreSQL store is closed")

// subscription is one subscriber to the notifications of a channel,
// delivered by the store's listener. Its functions are called with the
// listener's lock held: they must not block, nor subscribe.
type subscription struct {
	channel string
	name    string // names the subscriber in the listener's errors
	// notified is called with each notification's payload on channel;
	// reconnected after each reconnection (notifications sent while the
	// connection was away are lost); end once, when the subscription has
	// ended, after the last call of the others.
	notified    func(payload string)
	reconnected func()
	end         func()
	// failed is called with each connection failure; nil: the failure
	// goes to the store's OnError, once for all the subscriptions of one
	// channel and name.
	failed func(error)
}

// listener is a store's one LISTEN connection (not one of the pool's: it
// is held for as long as there are subscriptions), listening on every
// channel of listenChannels and handing each notification to the
// subscriptions of its channel. It runs while there are subscriptions,
// and stops (closing the connection) when the last one ends or the store
// closes.
type listener struct {
	mu     sync.Mutex
	subs   map[*subscription]struct{}
	stop   context.CancelFunc // stops the running loop; nil when none runs
	done   chan struct{}      // closed when the running loop has returned
	closed bool               // the store is closed
}

// failure is a connection failure as told to the subscription of channel
// with name.
type failure func(channel, name string) error

// subscribe adds sub to the store's listener until ctx ends or the store
// closes. When the listener does not run it starts it, and returns once
// its LISTEN is in place, or the error that prevented it. When it runs but
// is reconnecting, sub is told to resync (reconnected) when it is back.
func (s *Store) subscribe(ctx context.Context, sub *subscription) error {
	l := &s.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("listening on %s: %w", sub.channel, errClosed)
	}
	if l.stop == nil {
		conn, fail := s.listenConn(ctx)
		if fail != nil {
			return fail(sub.channel, sub.name)
		}
		lctx, stop := context.WithCancel(context.Background())
		l.stop, l.done = stop, make(chan struct{})
		go s.listen(lctx, conn, l.done)
	}
	if l.subs == nil {
		l.subs = map[*subscription]struct{}{}
	}
	l.subs[sub] = struct{}{}
	context.AfterFunc(ctx, func() { s.unsubscribe(sub) })
	return nil
}

// unsubscribe ends sub, stopping the listener (and waiting until its
// connection is closed) if it was the last subscription.
func (s *Store) unsubscribe(sub *subscription) {
	l := &s.listener
	l.mu.Lock()
	if _, ok := l.subs[sub]; !ok { // ended by Close
		l.mu.Unlock()
		return
	}
	delete(l.subs, sub)
	var done chan struct{}
	if len(l.subs) == 0 {
		done = l.stopLocked()
	}
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	sub.end()
}

// Close ends every subscription to the store's notifications (the
// channels of Changes and Wakeups are closed) and releases the listening
// connection; later subscriptions fail. It does not close the pool, which
// is the caller's.
func (s *Store) Close() {
	l := &s.listener
	l.mu.Lock()
	l.closed = true
	subs := l.subs
	l.subs = nil
	done := l.stopLocked()
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	for sub := range subs {
		sub.end()
	}
}

// stopLocked stops the running loop, if any, and returns the channel
// closed when it has returned. Called with mu held.
func (l *listener) stopLocked() chan struct{} {
	if l.stop == nil {
		return nil
	}
	done := l.done
	l.stop()
	l.stop, l.done = nil, nil
	return done
}

// listenConn opens a connection listening on every channel of
// listenChannels.
func (s *Store) listenConn(ctx context.Context) (*pgx.Conn, failure) {
	// Bounded (ListenTimeout, by default like a storage operation): the
	// first subscription connects under the listener's lock, which Close
	// and every other subscription wait for, and a database that does not
	// answer must not hold them longer than any other operation would.
	ctx, cancel := context.WithTimeout(ctx, s.listenTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, func(channel, _ string) error {
			return fmt.Errorf("connecting the listener of %s: %w", channel, err)
		}
	}
	for _, ch := range listenChannels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, func(string, string) error { return fmt.Errorf("listening on %s: %w", ch, err) }
		}
	}
	return conn, nil
}

// listen waits for notifications on conn until ctx ends, and hands each to
// the subscriptions of its channel. When the connection fails it tells
// the subscriptions and reconnects, backing off from 100 ms up to 5 s;
// once reconnected it tells them to resync. It closes done when it
// returns, after closing the connection.
func (s *Store) listen(ctx context.Context, conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	l := &s.listener
	backoff := 100 * time.Millisecond
	for {
		for conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var fail failure
			if conn, fail = s.listenConn(ctx); fail != nil {
				if ctx.Err() != nil {
					return
				}
				s.failed(ctx, fail)
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			l.each(ctx, func(sub *subscription) { sub.reconnected() })
		}
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			l.each(ctx, func(sub *subscription) {
				if sub.channel == n.Channel {
					sub.notified(n.Payload)
				}
			})
			continue
		}
		conn.Close(context.WithoutCancel(ctx))
		conn = nil
		if ctx.Err() != nil {
			return
		}
		s.failed(ctx, func(_, name string) error { return fmt.Errorf("%s: %w", name, err) })
	}
}

// each calls fn for every subscription, with mu held, unless the loop of
// ctx has been stopped meanwhile.
func (l *listener) each(ctx context.Context, fn func(*subscription)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	for sub := range l.subs {
		fn(sub)
	}
}

// failed tells each subscription of the connection failure fail: those
// with a failed function through it, the others through the store's
// OnError, once per channel and name.
func (s *Store) failed(ctx context.Context, fail failure) {
	reported := map[[2]string]bool{}
	s.listener.each(ctx, func(sub *subscription) {
		if sub.failed != nil {
			sub.failed(fail(sub.channel, sub.name))
			return
		}
		if key := [2]string{sub.channel, sub.name}; !reported[key] {
			reported[key] = true
			s.reportError(fail(sub.channel, sub.name))
		}
	})
}
