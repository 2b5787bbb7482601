package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// postgresGateway prepares a demo gateway on the database dsn, with a data
// directory of its own.
func postgresGateway(t *testing.T, dsn string) *repoGateway {
	t.Helper()
	g := newRepoGateway(t, withPostgres(t, repoCaddyfile(t)))
	g.Env = append(g.Env, "FULFILGATE_DATABASE_URL="+dsn)
	return g
}

// The partners and clients created on a gateway are in PostgreSQL: a new
// gateway with an empty data directory on the same database issues their
// tokens.
func TestPostgresStorageKeepsTheStateInTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	g := postgresGateway(t, dsn)
	g.run(t)
	var created struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cliJSON(t, g, &created, "partner", "create", "partner-pg")
	tok, err := tokenFor(t, g, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatalf("a token for the created partner: %v", err)
	}
	if s := shipmentsStatus(t, g, tok); s != http.StatusOK {
		t.Fatalf("the created partner's token: %d, want 200", s)
	}

	g.Stop()
	h := postgresGateway(t, dsn)
	h.run(t)
	tok, err = tokenFor(t, h, created.ClientID, created.ClientSecret)
	if err != nil {
		t.Fatalf("the partner created on the first gateway, asked on a new one with an empty data directory: %v", err)
	}
	if s := shipmentsStatus(t, h, tok); s != http.StatusOK {
		t.Fatalf("the new gateway's token: %d, want 200", s)
	}
}

// A wrong password in the database URL fails the start with the reason,
// and never shows the password.
func TestPostgresStorageWithAWrongPasswordFailsTheStart(t *testing.T) {
	t.Parallel()
	pgtest.Exec(t, "CREATE ROLE e2e_gateway LOGIN PASSWORD 'right-e2e-password'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP ROLE IF EXISTS e2e_gateway") })
	g := postgresGateway(t, pgtest.Server(t).DSNFor("e2e_gateway", "wrong-e2e-password", "postgres"))
	out := runExpectingFailure(t, g)
	if !strings.Contains(out, "refused the credentials") {
		t.Fatalf("start with a wrong password: want a failed start saying the credentials were refused; output:\n%s", out)
	}
	if strings.Contains(out, "wrong-e2e-password") {
		t.Errorf("the output shows the password:\n%s", out)
	}
}
