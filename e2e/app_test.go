package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// The fulfilment app opens its Badger data dir on start and closes it on a
// graceful stop, so a second start on the same dir succeeds.
func TestAppOpensAndClosesDataDir(t *testing.T) {
	t.Parallel()
	const cf = `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
	}
}
`
	g := startGateway(t, cf)
	data := filepath.Join(g.Dir, "data")
	if _, err := os.Stat(filepath.Join(data, "MANIFEST")); err != nil {
		t.Fatalf("data dir has no Badger MANIFEST after start: %v\n%s", err, g.Logs)
	}
	g.Stop()
	if !contains(g.Logs.String(), "data directory closed") {
		t.Fatalf("no close logged on stop:\n%s", g.Logs)
	}
	g.Restart()
	if contains(g.Logs.String(), "Cannot acquire directory lock") {
		t.Fatalf("lock error on restart:\n%s", g.Logs)
	}
}

// `caddy validate` provisions a config without starting it, so it must work
// while a server holds the data dir's Badger lock.
func TestValidateWhileServerRuns(t *testing.T) {
	t.Parallel()
	const cf = `{
	admin {$ADMIN}
	fulfilment {
		data_dir {$DATA}
	}
}
`
	g := startGateway(t, cf)
	out, err := g.CLI("validate", "--config", "Caddyfile", "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("caddy validate failed while the server runs: %v\n%s", err, out)
	}
	if !contains(out, "Valid configuration") {
		t.Fatalf("validate did not report a valid configuration:\n%s", out)
	}
	// And it refuses a broken one with a clear message.
	if err := os.WriteFile(filepath.Join(g.Dir, "Broken"), []byte("{\n\tfulfilment {\n\t\tcolour blue\n\t}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = g.CLI("validate", "--config", "Broken", "--adapter", "caddyfile")
	if err == nil || !contains(out, "unknown fulfilment option", "colour") {
		t.Fatalf("broken config: err=%v, output:\n%s", err, out)
	}
}
