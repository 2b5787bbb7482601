package e2e

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// postgresCaddyfile is the repository's Caddyfile with its state in the
// PostgreSQL database of $FULFILGATE_DATABASE_URL.
func postgresCaddyfile(t *testing.T) string {
	t.Helper()
	const dataDir = "data_dir {$FULFILGATE_DATA:./data}\n"
	cf := repoCaddyfile(t)
	if !strings.Contains(cf, dataDir) {
		t.Fatalf("the repository's Caddyfile has no line %q to add the storage option after", dataDir)
	}
	return strings.Replace(cf, dataDir, dataDir+"\t\tstorage postgres {env.FULFILGATE_DATABASE_URL}\n", 1)
}

// postgresGateway prepares a demo gateway on the database dsn, with a data
// directory of its own.
func postgresGateway(t *testing.T, dsn string) *repoGateway {
	t.Helper()
	g := newRepoGateway(t, postgresCaddyfile(t))
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, caddyBin, "run", "--config", "Caddyfile", "--adapter", "caddyfile")
	run.Dir, run.Env = g.Dir, append(run.Environ(), g.Env...)
	out, err := run.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refused the credentials") {
		t.Fatalf("start with a wrong password: %v, want a failed start saying the credentials were refused; output:\n%s", err, out)
	}
	if strings.Contains(string(out), "wrong-e2e-password") {
		t.Errorf("the output shows the password:\n%s", out)
	}
}
