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
