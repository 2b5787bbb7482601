package adminapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// storageCommand is a command with the storage commands' flags, set from
// args.
func storageCommand(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	cmd := &cobra.Command{Use: "export"}
	cmd.Flags().String("database-url", "", "")
	cmd.Flags().String("data-dir", "", "")
	cmd.Flags().String("config", "", "")
	cmd.Flags().String("adapter", "", "")
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// The storage commands take the storage from the first of: --database-url,
// --data-dir, --config, $FULFILGATE_DATABASE_URL, ./Caddyfile, the
// default data dir.
func TestStorageCommandsFindTheStorageInOrder(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	caddyfile := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(caddyfile, []byte("{\n\tfulfilment {\n\t\tstorage postgres postgres://gw:pw@db.internal/from-config\n\t}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const envURL = "postgres://gw:pw@db.internal/from-env"
	for _, c := range []struct {
		name       string
		env        string
		args       []string
		backend    string
		fromSource string
	}{
		{"--database-url", envURL, []string{"--database-url", "postgres://gw:pw@db.internal/flag", "--config", caddyfile}, "postgres", "--database-url"},
		{"--data-dir before the configuration and the environment", envURL, []string{"--data-dir", dir, "--config", caddyfile}, "badger", "--data-dir " + dir},
		{"--config before the environment", envURL, []string{"--config", caddyfile, "--adapter", "caddyfile"}, "postgres", "the storage of " + caddyfile},
		{"the environment", envURL, nil, "postgres", "$FULFILGATE_DATABASE_URL"},
		{"the default", "", nil, "badger", "the default data directory"},
	} {
		t.Setenv(databaseURLEnv, c.env)
		o, source, err := commandStorage(storageCommand(t, c.args...))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if o.Name() != c.backend || source != c.fromSource {
			t.Errorf("%s: storage %s from %q, want %s from %q", c.name, o.Name(), source, c.backend, c.fromSource)
		}
	}
}

func TestStorageCommandsRefuseADatabaseAndADataDirAtOnce(t *testing.T) {
	_, _, err := commandStorage(storageCommand(t, "--database-url", "postgres://gw:pw@db/x", "--data-dir", t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("--database-url with --data-dir: %v, want a usage error saying to give one", err)
	}
}

func TestStorageCommandsReadTheCaddyfileOfTheCurrentDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(databaseURLEnv, "")
	dir := t.TempDir()
	if err := os.WriteFile("Caddyfile", []byte("{\n\tfulfilment {\n\t\tdata_dir "+dir+"\n\t}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, source, err := commandStorage(storageCommand(t))
	if err != nil || o.Name() != "badger" || o.DataDir() != dir || source != "the storage of Caddyfile" {
		t.Fatalf("with ./Caddyfile: %v, %q; want badger in %s from the storage of Caddyfile", err, source, dir)
	}
}
