package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fulfilgate/fulfilgate/tokens"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// ChangeChannel is the LISTEN/NOTIFY channel told, in the transaction of
// every write to state the instances keep in memory, what it changed: the
// payload is one of the change kinds below. PostgreSQL delivers it on
// commit, and not at all on rollback.
const ChangeChannel = "fulfilgate_changes"

// Change kinds, the payloads on ChangeChannel.
const (
	changePartners      = "partners"      // partners, clients, static partners' webhook keys
	changeKeys          = "keys"          // generated signing keys
	changeSubscriptions = "subscriptions" // webhook subscriptions
)

// queueNotify adds the notification of a change of kind to b (sent in a
// transaction).
func queueNotify(b *pgx.Batch, kind string) {
	b.Queue("SELECT pg_notify($1, $2)", ChangeChannel, kind)
}

// notify tells the listeners of ChangeChannel, on commit of tx, of a change
// of kind.
func notify(ctx context.Context, tx pgx.Tx, kind string) error {
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", ChangeChannel, kind); err != nil {
		return fmt.Errorf("notifying the change of %s: %w", kind, err)
	}
	return nil
}

// Changes implements tokens.ChangeNotifier.
func (ts *tokenStore) Changes(ctx context.Context) (<-chan tokens.Change, error) {
	return follow(ctx, ts.s, tokens.ChangeAll, func(kind string) tokens.Change {
		switch kind {
		case changePartners:
			return tokens.ChangePartners
		case changeKeys:
			return tokens.ChangeKeys
		}
		return 0
	})
}

// Changes implements webhooks.ChangeNotifier.
func (ws *webhookStore) Changes(ctx context.Context) (<-chan webhooks.Change, error) {
	return follow(ctx, ws.s, webhooks.ChangeAll, func(kind string) webhooks.Change {
		if kind == changeSubscriptions {
			return webhooks.ChangeSubscriptions
		}
		return 0
	})
}

// follow subscribes to ChangeChannel, on the store's one listening
// connection, until ctx ends or the store closes, and returns once the
// LISTEN is in place. The channel (one value buffered; kinds arriving
// while it is full are merged into it) receives of(payload) for each
// notification whose kind of is not 0, and all after each reconnection,
// since notifications sent while the connection was away are lost.
// Connection failures go to the store's OnError; the connection is
// reopened, backing off up to 5 s. The channel is closed when the
// subscription ends.
func follow[C ~uint8](ctx context.Context, s *Store, all C, of func(kind string) C) (<-chan C, error) {
	out := make(chan C, 1)
	send := func(c C) {
		// The only sender (the listener calls it with its lock held):
		// when the buffer is full, merge with what waits there (or, if
		// the reader took it meanwhile, send alone).
		select {
		case out <- c:
		default:
			select {
			case prev := <-out:
				out <- prev | c
			default:
				out <- c
			}
		}
	}
	err := s.subscribe(ctx, &subscription{
		channel: ChangeChannel,
		name:    "change listener",
		notified: func(payload string) {
			if c := of(payload); c != 0 {
				send(c)
			}
		},
		reconnected: func() { send(all) },
		end:         func() { close(out) },
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// reportError hands an error of background work to OnError's function.
func (s *Store) reportError(err error) {
	if s.onError != nil {
		s.onError(err)
	}
}
