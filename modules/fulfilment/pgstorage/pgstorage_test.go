package pgstorage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// provisioned is the module for dsn, provisioned.
func provisioned(t *testing.T, dsn string) *Storage {
	t.Helper()
	s := &Storage{DSN: dsn}
	if err := s.Provision(caddy.Context{}); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	return s
}

func TestCaddyfileOptions(t *testing.T) {
	s := new(Storage)
	d := caddyfile.NewTestDispenser("postgres {env.FULFILGATE_DATABASE_URL} {\n max_conns 8\n statement_timeout 5s\n listen_timeout 7s\n}")
	if err := s.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if s.DSN != "{env.FULFILGATE_DATABASE_URL}" || s.MaxConns != 8 || time.Duration(s.StatementTimeout) != 5*time.Second || time.Duration(s.ListenTimeout) != 7*time.Second {
		t.Errorf("parsed %+v, want the DSN placeholder, max_conns 8, statement_timeout 5s and listen_timeout 7s", s)
	}
}

func TestCaddyfileMistakesAreRefusedWithTheReason(t *testing.T) {
	for input, want := range map[string]string{
		"postgres":                                    "needs the database URL",
		"postgres a b":                                "wrong argument count",
		"postgres a {\n max_conns 0\n}":               "positive whole number",
		"postgres a {\n max_conns\n}":                 "wrong argument count",
		"postgres a {\n statement_timeout soon\n}":    "positive duration",
		"postgres a {\n listen_timeout 0s\n}":         "listen_timeout must be a positive duration",
		"postgres a {\n listen_timeout -1s\n}":        "listen_timeout must be a positive duration",
		"postgres a {\n pool 3\n}":                    "unknown storage postgres option",
		"postgres a {\n max_conns 2\n max_conns 3\n}": "given twice",
	} {
		err := new(Storage).UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", input, err, want)
		}
	}
}

func TestProvisionReplacesTheEnvironmentPlaceholder(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("FULFILGATE_TEST_DATABASE_URL", dsn)
	if got := provisioned(t, "{env.FULFILGATE_TEST_DATABASE_URL}").dsn; got != dsn {
		t.Errorf("the DSN after Provision is %q, want the variable's value", got)
	}
}

func TestProvisionRefusesAnEmptyOrInvalidURL(t *testing.T) {
	t.Setenv("FULFILGATE_TEST_EMPTY", "")
	for dsn, want := range map[string]string{
		"{env.FULFILGATE_TEST_EMPTY}": "empty",
		"":                            "needs the database URL",
		"postgres://u:topsecret@localhost:bad/db": "not valid",
	} {
		err := (&Storage{DSN: dsn}).Provision(caddy.Context{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DSN %q: %v, want an error saying %q", dsn, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "topsecret") {
			t.Errorf("DSN %q: the error %q shows the password", dsn, err)
		}
	}
}

func TestOpenStoresMigratesAndServes(t *testing.T) {
	s := provisioned(t, pgtest.Database(t))
	st, err := s.OpenStores(t.TempDir(), nil, zap.NewNop())
	if err != nil {
		t.Fatalf("OpenStores: %v", err)
	}
	defer st.Close()
	p, err := st.Tokens().Pepper(func() ([]byte, error) { return []byte("a pepper of thirty-two bytes....."), nil })
	if err != nil || len(p) == 0 {
		t.Fatalf("the opened token store's Pepper: %q, %v", p, err)
	}
	if q, d, err := st.Webhooks().Depth(); err != nil || q != 0 || d != 0 {
		t.Fatalf("the opened queue's Depth: %d, %d, %v; want an empty queue", q, d, err)
	}
}

func TestSeveralGatewaysOpenTheSameDatabase(t *testing.T) {
	dsn := pgtest.Database(t)
	first, err := provisioned(t, dsn).OpenStores(t.TempDir(), nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := provisioned(t, dsn).OpenStores(t.TempDir(), nil, zap.NewNop())
	if err != nil {
		t.Fatalf("a second gateway's OpenStores on the first's database: %v, want it opened", err)
	}
	second.Close()
}

func TestOpenStoresWithAWrongPasswordSaysSo(t *testing.T) {
	pgtest.Exec(t, "CREATE ROLE gw_module LOGIN PASSWORD 'the-right-one'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP ROLE IF EXISTS gw_module") })
	s := provisioned(t, pgtest.Server(t).DSNFor("gw_module", "a-wrong-one", "postgres"))
	_, err := s.OpenStores(t.TempDir(), nil, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") || strings.Contains(err.Error(), "a-wrong-one") {
		t.Fatalf("OpenStores with a wrong password: %v, want the credentials said refused, without the password", err)
	}
}

func TestOpenStoresRefusesAnEncryptionKey(t *testing.T) {
	s := provisioned(t, pgtest.Database(t))
	_, err := s.OpenStores(t.TempDir(), []byte("0123456789abcdef0123456789abcdef"), zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "encryption_key") {
		t.Fatalf("OpenStores with an encryption key: %v, want it refused: the key would protect nothing", err)
	}
}

func TestOpenStoresRefusesASchemaNewerThanTheBinary(t *testing.T) {
	dsn := pgtest.Database(t)
	pool, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Migrate(context.Background(), pool, false); err != nil {
		t.Fatal(err)
	}
	// A newer gateway recorded a migration this one does not know.
	if _, err := pool.Exec(context.Background(), "INSERT INTO "+pgstore.VersionTable+" (version_id, is_applied) VALUES (9999, true)"); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	_, err = provisioned(t, dsn).OpenStores(t.TempDir(), nil, zap.NewNop())
	if !errors.Is(err, pgstore.ErrSchemaNewer) {
		t.Fatalf("OpenStores on a newer schema: %v, want ErrSchemaNewer", err)
	}
}

// `caddy validate` provisions the module: it must not need the database.
func TestProvisionDoesNotConnect(t *testing.T) {
	s := &Storage{DSN: "postgres://gateway:pw@/db?host=" + t.TempDir()} // no server there
	if err := s.Provision(caddy.Context{}); err != nil {
		t.Fatalf("Provision with a database that is not there: %v, want success (it only checks the URL)", err)
	}
}
