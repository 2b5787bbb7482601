package pgstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// A database that accepts the listening connection and never answers (or
// hangs up) fails the subscription instead of holding it, and Close, which
// waits for the listener's lock the first subscription connects under.

// testListenTimeout is the ListenTimeout of these tests: short, so that
// waiting for it is quick; the tests wait wakeWithin, many times it,
// before they call the store hung.
const testListenTimeout = 300 * time.Millisecond

// gatedStore is a store whose pool reaches a fresh database through a gate,
// opened while the gate is open (its connection stays usable), with the
// listen timeout given (0: the default). The store is closed when t ends.
func gatedStore(t *testing.T, listenTimeout time.Duration) (s *Store, g *pgtest.Gate, password string) {
	t.Helper()
	g, dsn := pgtest.NewGate(t, pgtest.Database(t))
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password, _ = u.User.Password()
	if password == "" {
		t.Fatal("the harness's database URL has no password: the test needs one to look for in the errors")
	}
	s = New(openPool(t, dsn)).ListenTimeout(listenTimeout)
	t.Cleanup(s.Close)
	return s, g, password
}

// subscribeAsync calls Wakeups in a goroutine and returns its error's
// channel.
func subscribeAsync(s *Store) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := s.Wakeups(context.Background(), nil)
		errc <- err
	}()
	return errc
}

// subscribeFailed waits for the error of a subscription the database
// refused to serve, failing t if none comes within wakeWithin (the gate's
// connections are then closed, so that the hung connect ends with t).
func subscribeFailed(t *testing.T, g *pgtest.Gate, errc <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatalf("%s: Wakeups succeeded, want an error", what)
		}
		return err
	case <-time.After(wakeWithin):
		g.Release()
		t.Fatalf("%s: Wakeups had not returned after %s: the connect is not bounded", what, wakeWithin)
		return nil
	}
}

// closes fails t unless s.Close returns within wakeWithin.
func closes(t *testing.T, s *Store, g *pgtest.Gate, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wakeWithin):
		g.Release()
		t.Fatalf("%s: Close had not returned after %s", what, wakeWithin)
	}
}

// saysConnecting fails t unless err says the listener could not connect,
// without the password of the database URL.
func saysConnecting(t *testing.T, err error, password, what string) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "connecting the listener of "+WakeChannel+": ") {
		t.Errorf("%s: %q, want an error saying the listener of %s could not connect", what, err, WakeChannel)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("%s: %q contains the password of the database URL", what, err)
	}
}

func TestASubscriptionFailsWithinTheListenTimeoutWhenTheDatabaseDoesNotAnswer(t *testing.T) {
	s, g, password := gatedStore(t, testListenTimeout)
	g.Set(pgtest.GateSilent)
	err := subscribeFailed(t, g, subscribeAsync(s), "a database that does not answer the listener")
	saysConnecting(t, err, password, "a database that does not answer the listener")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%q does not wrap context.DeadlineExceeded, want the timeout as the reason", err)
	}
	closes(t, s, g, "after the subscription failed")
}

func TestCloseWaitingForAConnectToADatabaseThatDoesNotAnswerReturns(t *testing.T) {
	s, g, _ := gatedStore(t, testListenTimeout)
	g.Set(pgtest.GateSilent)
	errc := subscribeAsync(s)
	select {
	case <-g.Accepted:
	case <-time.After(wakeWithin):
		t.Fatalf("the listener did not connect to the gate within %s", wakeWithin)
	}
	closes(t, s, g, "Close while the first subscription connects")
	subscribeFailed(t, g, errc, "the subscription Close waited for")
	if _, err := s.Wakeups(context.Background(), nil); err == nil || !errors.Is(err, errClosed) {
		t.Fatalf("Wakeups after Close: %v, want an error saying the store is closed", err)
	}
}

// A database that hangs up fails the subscription at once: the default
// bound (30 s) is longer than the test waits.
func TestASubscriptionFailsWhenTheDatabaseHangsUp(t *testing.T) {
	s, g, password := gatedStore(t, 0)
	g.Set(pgtest.GateHangUp)
	err := subscribeFailed(t, g, subscribeAsync(s), "a database that hangs up on the listener")
	saysConnecting(t, err, password, "a database that hangs up on the listener")
	closes(t, s, g, "after the subscription failed")
}

func TestAListenTimeoutThatIsNotPositiveKeepsTheDefault(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if got := New(nil).ListenTimeout(d).listenTimeout; got != opTimeout {
			t.Errorf("ListenTimeout(%s) leaves a bound of %s, want the default %s (the connect is never unbounded)", d, got, opTimeout)
		}
	}
}
