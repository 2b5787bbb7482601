package pgtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestDatabaseIsFreshPerCall(t *testing.T) {
	a, b := connect(t, Database(t)), connect(t, Database(t))
	ctx := context.Background()
	if _, err := a.Exec(ctx, "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatalf("creating a table in the first database: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil {
		t.Fatalf("querying the second database: %v", err)
	}
	if n != 0 {
		t.Errorf("a table created in one test database is visible in another: want each Database call to give an empty database")
	}
}

func TestDatabaseIsDroppedAfterTheTest(t *testing.T) {
	var name string
	t.Run("uses a database", func(t *testing.T) {
		dsn := Database(t)
		if err := connect(t, dsn).QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatalf("reading the database's name: %v", err)
		}
	})
	var n int
	if err := connect(t, Server(t).DSN("postgres")).QueryRow(context.Background(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatalf("looking for the database: %v", err)
	}
	if n != 0 {
		t.Errorf("database %q still exists after its test ended: want it dropped", name)
	}
}

func TestServerRefusesAWrongPassword(t *testing.T) {
	c := Server(t)
	Database(t) // the server is up
	_, err := pgx.Connect(context.Background(), c.DSNFor(Superuser, "wrong", "postgres"))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
		t.Fatalf("connecting with a wrong password: got %v, want invalid_password (28P01): the cluster must check passwords", err)
	}
}

// childEnv marks the test binary run by TestMissingPostgres*.
const childEnv = "PGTEST_CHILD"

// TestChildAsksForDatabase is the test the child binary runs; it does
// nothing in a normal run.
func TestChildAsksForDatabase(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only in the child test binary of TestMissingPostgres*")
	}
	Database(t)
	t.Log("got a database")
}

// runWithoutPostgres runs this test binary's TestChildAsksForDatabase with
// an empty binary directory and CI set to ci.
func runWithoutPostgres(t *testing.T, ci string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildAsksForDatabase$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", BinDirEnv+"="+t.TempDir(), "CI="+ci)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestMissingPostgresSkipsLocally(t *testing.T) {
	out, err := runWithoutPostgres(t, "")
	if err != nil {
		t.Fatalf("without PostgreSQL and without CI the tests must skip and pass: %v\n%s", err, out)
	}
	if !strings.Contains(out, "--- SKIP: TestChildAsksForDatabase") {
		t.Errorf("want the test skipped, got:\n%s", out)
	}
	if !strings.Contains(out, "apt-get install -y postgresql") {
		t.Errorf("want the skip message to name the package to install, got:\n%s", out)
	}
}

func TestMissingPostgresFailsInCI(t *testing.T) {
	out, err := runWithoutPostgres(t, "true")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("without PostgreSQL and with CI=true the test binary must fail, got %v:\n%s", err, out)
	}
	if strings.Contains(out, "got a database") || !strings.Contains(out, "CI is set") {
		t.Errorf("want the failure to say CI is set and no test to run, got:\n%s", out)
	}
	if !strings.Contains(out, "apt-get install -y postgresql") {
		t.Errorf("want the failure to name the package to install, got:\n%s", out)
	}
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true, "yes": true} {
		t.Setenv("CI", v)
		if got := InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v, want %v", v, got, want)
		}
	}
}
