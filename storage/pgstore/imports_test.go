package pgstore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyThePostgresBackendImportsTheDriver: pgx and goose stay inside
// storage/pgstore (and its test harness); the domain packages, the other
// backends and the Caddy glue use the seam.
func TestOnlyThePostgresBackendImportsTheDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`,
		"github.com/fulfilgate/fulfilgate/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		checked++
		if pkg == "github.com/fulfilgate/fulfilgate/storage/pgstore" || strings.HasPrefix(pkg, "github.com/fulfilgate/fulfilgate/storage/pgstore/") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "github.com/jackc/") || strings.HasPrefix(imp, "github.com/pressly/goose") {
				t.Errorf("%s imports %s: only storage/pgstore may use the PostgreSQL driver and migrator", pkg, imp)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list listed %d packages, want the whole module", checked)
	}
}
