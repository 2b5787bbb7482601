package storage_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// domainPackages store only through the interfaces they own (and
// storage/transfer, the copy between backends, only through theirs).
var domainPackages = []string{
	"github.com/fulfilgate/fulfilgate/storage/transfer",
	"github.com/fulfilgate/fulfilgate/tokens",
	"github.com/fulfilgate/fulfilgate/webhooks",
	"github.com/fulfilgate/fulfilgate/webhooks/feed",
	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy",
	"github.com/fulfilgate/fulfilgate/versioning",
	"github.com/fulfilgate/fulfilgate/portal",
}

// forbidden are the import path prefixes no domain package may depend on,
// directly or not: database drivers, the backends, Caddy.
var forbidden = []string{
	"github.com/dgraph-io/badger",
	"github.com/jackc/pgx",
	"github.com/lib/pq",
	"github.com/fulfilgate/fulfilgate/storage/",
	"github.com/fulfilgate/fulfilgate/internal/datadir",
	"github.com/caddyserver/caddy",
	"github.com/fulfilgate/fulfilgate/modules/",
}

// deps lists the packages pkgs depend on (themselves included), without
// their tests, as go list -deps does.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}

// violations returns the forbidden dependencies among ds.
func violations(ds []string) []string {
	var bad []string
	for _, d := range ds {
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

func TestDomainPackagesDependOnNoDriverBackendOrCaddy(t *testing.T) {
	for _, pkg := range domainPackages {
		ds := deps(t, pkg)
		ds = slices.DeleteFunc(ds, func(d string) bool { return d == pkg }) // storage/transfer is under storage/
		if bad := violations(ds); len(bad) > 0 {
			t.Errorf("%s depends on %v; want no database driver, storage backend or Caddy (store through the package's own interfaces)", pkg, bad)
		}
	}
}

// The check sees a driver where there is one: the Badger backend depends
// on Badger.
func TestTheCheckFindsADriver(t *testing.T) {
	if bad := violations(deps(t, "github.com/fulfilgate/fulfilgate/storage/badgerstore")); len(bad) == 0 {
		t.Fatal("no forbidden dependency found in storage/badgerstore, which imports Badger: the check cannot fail")
	}
}
