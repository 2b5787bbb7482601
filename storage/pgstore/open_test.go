package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// openFails opens dsn, which must fail, and returns the error's text.
func openFails(t *testing.T, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pool, err := Open(ctx, dsn, Options{})
	if err == nil {
		pool.Close()
		t.Fatalf("Open(%s) succeeded, want an error", dsn)
	}
	t.Logf("Open: %v", err)
	return err.Error()
}

func TestOpenWithAWrongPasswordSaysTheCredentialsWereRefused(t *testing.T) {
	c := pgtest.Server(t)
	pgtest.Exec(t, "CREATE ROLE gateway_wrongpw LOGIN PASSWORD 'right-password-1'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP ROLE IF EXISTS gateway_wrongpw") })
	msg := openFails(t, c.DSNFor("gateway_wrongpw", "not-the-password-7", "postgres"))
	if !strings.Contains(msg, "refused the credentials") || !strings.Contains(msg, "password") || !strings.Contains(msg, `"gateway_wrongpw"`) {
		t.Errorf("a wrong password gave %q, want it to say the credentials of user gateway_wrongpw were refused", msg)
	}
	if strings.Contains(msg, "not-the-password-7") {
		t.Errorf("the error %q contains the password", msg)
	}
}

func TestOpenAMissingDatabaseSaysSo(t *testing.T) {
	msg := openFails(t, pgtest.Server(t).DSN("no_such_db"))
	if !strings.Contains(msg, `no database "no_such_db"`) {
		t.Errorf("a missing database gave %q, want it named", msg)
	}
}

func TestOpenAnUnreachableServerSaysSo(t *testing.T) {
	msg := openFails(t, "postgres://gateway:secret-pw-3@/db?host="+t.TempDir()+"&connect_timeout=5")
	if !strings.Contains(msg, "cannot reach PostgreSQL") {
		t.Errorf("a server that is not there gave %q, want it to say it cannot be reached", msg)
	}
	if strings.Contains(msg, "secret-pw-3") {
		t.Errorf("the error %q contains the password", msg)
	}
}

func TestOpenAnInvalidURLNeverShowsThePassword(t *testing.T) {
	msg := openFails(t, "postgres://gateway:hunter2-secret@localhost:notaport/db")
	if !strings.Contains(msg, "database URL is not valid") {
		t.Errorf("an invalid URL gave %q, want it to say the URL is not valid", msg)
	}
	if strings.Contains(msg, "hunter2-secret") {
		t.Errorf("the error %q contains the password", msg)
	}
}

func TestOpenAppliesTheStatementTimeout(t *testing.T) {
	pool, err := Open(context.Background(), pgtest.Database(t), Options{StatementTimeout: 1500 * time.Millisecond, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var got string
	if err := pool.QueryRow(context.Background(), "SHOW statement_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1500ms" {
		t.Errorf("statement_timeout = %q, want 1500ms", got)
	}
	if n := pool.Config().MaxConns; n != 2 {
		t.Errorf("MaxConns = %d, want 2", n)
	}
}
