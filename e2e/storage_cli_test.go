package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

// storageCLI runs `caddy fulfilment <args>` in a fresh directory (no
// Caddyfile) and returns its standard output, its standard error and its
// exit status.
func storageCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, append([]string{"fulfilment"}, args...)...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("caddy fulfilment %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String(), 0
}

// migrateResult is what `caddy fulfilment migrate` prints.
type migrateResult struct {
	From, To int64
	DryRun   bool
	Applied  []struct{ Version int64 }
}

// migrate runs `caddy fulfilment migrate` on dsn with extra flags and
// decodes its answer, failing t unless it succeeds.
func migrate(t *testing.T, dsn string, flags ...string) migrateResult {
	t.Helper()
	out, errOut, code := storageCLI(t, append([]string{"migrate", "--database-url", dsn}, flags...)...)
	var res migrateResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("caddy fulfilment migrate %v: exit %d\n%s%s", flags, code, out, errOut)
	}
	return res
}

func TestCLIMigrateDryRunListsThePendingMigrationsAndChangesNothing(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	for range 2 { // the second dry run finds the same: the first changed nothing
		if res := migrate(t, dsn, "--dry-run"); !res.DryRun || res.From != 0 || res.To != pgstore.LatestVersion() || len(res.Applied) == 0 {
			t.Fatalf("migrate --dry-run on an empty database = %+v, want every migration listed, from 0 to %d", res, pgstore.LatestVersion())
		}
	}
	res := migrate(t, dsn)
	if res.DryRun || res.To != pgstore.LatestVersion() || len(res.Applied) == 0 {
		t.Fatalf("migrate = %+v, want the migrations applied up to %d", res, pgstore.LatestVersion())
	}
	if again := migrate(t, dsn, "--dry-run"); len(again.Applied) != 0 || again.From != pgstore.LatestVersion() {
		t.Fatalf("migrate --dry-run after migrate = %+v, want nothing pending at version %d", again, pgstore.LatestVersion())
	}
}

func TestCLIMigrateRefusesASchemaNewerThanTheBinary(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	migrate(t, dsn)
	pool, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// A newer gateway recorded a migration this one does not know.
	if _, err := pool.Exec(context.Background(), "INSERT INTO "+pgstore.VersionTable+" (version_id, is_applied) VALUES (9999, true)"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := storageCLI(t, "migrate", "--database-url", dsn)
	if code == 0 || !strings.Contains(errOut, "newer than this gateway") || !strings.Contains(errOut, "schema version 9999") {
		t.Fatalf("migrate on a newer schema: exit %d, want a refusal naming the database's version 9999\n%s%s", code, out, errOut)
	}
}

// Two migrates started at once on an empty database both succeed, and the
// migrations are applied once between them (the advisory lock).
func TestCLIMigrateTwiceAtOnceAppliesEachMigrationOnce(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	var wg sync.WaitGroup
	results := make([]migrateResult, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = migrate(t, dsn)
		}()
	}
	wg.Wait()
	dry := migrate(t, dsn, "--dry-run")
	if n := len(results[0].Applied) + len(results[1].Applied); n != len(migrate(t, pgtest.Database(t), "--dry-run").Applied) || len(dry.Applied) != 0 {
		t.Fatalf("two migrates at once applied %d migrations between them (%+v), and %d are pending after; want each applied once, none pending",
			n, results, len(dry.Applied))
	}
}

// The database's refusals and absence are said in a sentence that names
// the problem and never shows the password.
func TestCLIMigrateSaysWhyItCannotConnectWithoutThePassword(t *testing.T) {
	t.Parallel()
	pgtest.Exec(t, "CREATE ROLE e2e_migrator LOGIN PASSWORD 'right-migrate-password'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP ROLE IF EXISTS e2e_migrator") })
	for name, c := range map[string]struct{ dsn, want, password string }{
		"wrong password": {pgtest.Server(t).DSNFor("e2e_migrator", "wrong-migrate-password", "postgres"),
			"refused the credentials", "wrong-migrate-password"},
		"no server": {fmt.Sprintf("postgres://gateway:unreachable-password@127.0.0.1:%d/gateway?connect_timeout=5", freePort(t)),
			"cannot reach PostgreSQL", "unreachable-password"},
	} {
		out, errOut, code := storageCLI(t, "migrate", "--database-url", c.dsn)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: migrate exit %d, want a failure saying %q\n%s%s", name, code, c.want, out, errOut)
		}
		if strings.Contains(out+errOut, c.password) {
			t.Errorf("%s: the output shows the password:\n%s%s", name, out, errOut)
		}
	}
}

// A gateway whose database does not answer fails its start, saying so,
// without the password.
func TestPostgresStorageUnreachableAtStartFailsTheStart(t *testing.T) {
	t.Parallel()
	g := newRepoGateway(t, withPostgres(t, repoCaddyfile(t)))
	g.Env = append(g.Env, fmt.Sprintf("FULFILGATE_DATABASE_URL=postgres://gateway:unreachable-e2e-password@127.0.0.1:%d/gateway?connect_timeout=5", freePort(t)))
	out := runExpectingFailure(t, g)
	if !strings.Contains(out, "cannot reach PostgreSQL at 127.0.0.1") {
		t.Fatalf("start with no database server: want a failed start saying PostgreSQL cannot be reached; output:\n%s", out)
	}
	if strings.Contains(out, "unreachable-e2e-password") {
		t.Errorf("the output shows the password:\n%s", out)
	}
}

// An import into a data directory a gateway has run on (it holds a pepper
// and a signing key) is refused, saying what it holds.
func TestCLIImportRefusesAStorageThatIsNotEmpty(t *testing.T) {
	t.Parallel()
	g := newRepoGateway(t, repoCaddyfile(t))
	g.run(t)
	g.Stop()
	empty := t.TempDir() + "/empty"
	out, errOut, code := storageCLI(t, "export", "--data-dir", empty)
	if code == 0 || !strings.Contains(errOut, "no data directory") {
		t.Fatalf("export of a data directory that does not exist: exit %d, want it refused\n%s%s", code, out, errOut)
	}
	stream := `{"type":"header","format":"fulfilgate-export","version":1,"source":"badger","created":"2026-11-24T00:00:00Z"}` + "\n" +
		`{"type":"end","counts":{}}` + "\n"
	cmd := exec.Command(caddyBin, "fulfilment", "import", "--data-dir", g.DataDir)
	cmd.Stdin = strings.NewReader(stream)
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "the target storage is not empty") || !strings.Contains(string(b), "a pepper") {
		t.Fatalf("import into a used data directory: %v, want it refused saying it holds a pepper\n%s", err, b)
	}
}
