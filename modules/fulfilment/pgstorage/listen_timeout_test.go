package pgstorage

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// listen_timeout from the Caddyfile bounds opening the listening
// connection: on stores opened while the database answered, a database
// that then stops answering fails the first subscription within it, with
// the listener named and without the password, instead of after the 30 s
// every storage operation may take.
func TestListenTimeoutBoundsTheListener(t *testing.T) {
	gate, dsn := pgtest.NewGate(t, pgtest.Database(t))
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	t.Setenv("FULFILGATE_TEST_GATED_URL", dsn)
	s := new(Storage)
	if err := s.UnmarshalCaddyfile(caddyfile.NewTestDispenser("postgres {env.FULFILGATE_TEST_GATED_URL} {\n max_conns 1\n listen_timeout 300ms\n}")); err != nil {
		t.Fatal(err)
	}
	if err := s.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	opened, err := s.OpenStores(t.TempDir(), nil, zap.NewNop()) // connects and migrates through the open gate
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	st := opened.(*stores)

	gate.Set(pgtest.GateSilent)
	const within = 10 * time.Second // the default would be 30 s
	began := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := st.Wakeups(context.Background(), nil)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(within):
		gate.Release()
		t.Fatalf("the subscription had not returned %s after the database stopped answering: listen_timeout 300ms does not bound the listener", within)
	}
	if err == nil {
		t.Fatal("a subscription succeeded while the database did not answer the listener, want an error")
	}
	if !strings.Contains(err.Error(), "connecting the listener of") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the subscription failed with %q, want the listener's connect timed out", err)
	}
	if password != "" && strings.Contains(err.Error(), password) {
		t.Errorf("the error %q shows the database password", err)
	}
	t.Logf("the subscription failed after %s: %v", time.Since(began).Round(time.Millisecond), err)
}
