package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// wakeWithin is how long a test waits for a wake-up before failing: a
// bound on a hang, not a measure of speed.
const wakeWithin = 20 * time.Second

func waitWake(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-wake:
		if !ok {
			t.Fatalf("%s: the wake-up channel was closed", what)
		}
	case <-time.After(wakeWithin):
		t.Fatalf("%s: no wake-up within %s", what, wakeWithin)
	}
}

// listening returns the wake-ups of a listener on dsn, stopped when t ends.
func listening(t *testing.T, s *Store) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wake, err := s.Wakeups(ctx, func(err error) { t.Logf("listener: %v", err) })
	if err != nil {
		cancel()
		t.Fatalf("Wakeups: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		for range wake { // until the listener has stopped
		}
	})
	return wake
}

func TestQueueingOnOneInstanceWakesAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	wake := listening(t, b)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "after A queued a delivery")
}

func TestARetryWakesListeners(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	e := due("whd_1", "P1", t0)
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{e}, nil); err != nil {
		t.Fatal(err)
	}
	wake := listening(t, b)
	retry := []webhooks.Settlement{{Pos: e.Pos, Kind: webhooks.SettleRetry, Entry: due("whd_1", "P1", t0.Add(time.Second))}}
	if err := a.Webhooks().Settle(retry, []bool{false}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "after A re-scheduled a delivery")
}

func TestNothingQueuedWakesNobody(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	wake := listening(t, b)
	if err := a.Webhooks().Enqueue(nil, nil); err != nil {
		t.Fatal(err)
	}
	// A notification sent after the empty Enqueue arrives after anything
	// the Enqueue sent: the first wake-up must be this one's.
	if _, err := a.Pool().Exec(context.Background(), "SELECT pg_notify($1, 'marker')", WakeChannel); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "after the marker notification")
	select {
	case <-wake:
		t.Fatal("a second wake-up: an Enqueue of nothing notified the listeners")
	default:
	}
}

// TestTheListenerComesBackAfterItsConnectionIsKilled: the database ends
// the listener's session (a restart, a failover, an administrator); the
// listener reconnects, wakes its reader (notifications may have been
// missed meanwhile) and hears the next ones.
func TestTheListenerComesBackAfterItsConnectionIsKilled(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	wake := listening(t, b)
	tag, err := a.Pool().Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %'`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("ending the listener's session: %v (%d sessions), want the one listener", err, tag.RowsAffected())
	}
	waitWake(t, wake, "after the listener reconnected")
	if err := a.Webhooks().Enqueue([]webhooks.QueueEntry{due("whd_1", "P1", t0)}, nil); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "after A queued a delivery following the reconnection")
}
