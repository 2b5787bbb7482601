package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

// BinDirEnv names the variable that points at a directory holding initdb
// and postgres; when it is set, no other place is searched.
const BinDirEnv = "FULFILGATE_PG_BINDIR"

// InstallHint says how to get the PostgreSQL binaries on Debian.
const InstallHint = "install Debian's postgresql package (apt-get install -y postgresql) or set " + BinDirEnv

// binaries are the PostgreSQL server programs the harness runs.
type binaries struct {
	initdb   string
	postgres string
}

// findBinaries looks for initdb and postgres: in $FULFILGATE_PG_BINDIR when
// it is set, otherwise in the newest /usr/lib/postgresql/<version>/bin
// (Debian's layout, not on PATH) and then on PATH.
func findBinaries() (binaries, error) {
	if dir, ok := os.LookupEnv(BinDirEnv); ok {
		b, err := binariesIn(dir)
		if err != nil {
			return binaries{}, fmt.Errorf("%s=%s: %w", BinDirEnv, dir, err)
		}
		return b, nil
	}
	for _, dir := range debianBinDirs() {
		if b, err := binariesIn(dir); err == nil {
			return b, nil
		}
	}
	initdb, err1 := exec.LookPath("initdb")
	postgres, err2 := exec.LookPath("postgres")
	if err1 != nil || err2 != nil {
		return binaries{}, fmt.Errorf("no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH")
	}
	return binaries{initdb: initdb, postgres: postgres}, nil
}

func binariesIn(dir string) (binaries, error) {
	b := binaries{initdb: filepath.Join(dir, "initdb"), postgres: filepath.Join(dir, "postgres")}
	for _, p := range []string{b.initdb, b.postgres} {
		fi, err := os.Stat(p)
		if err != nil {
			return binaries{}, fmt.Errorf("no %s: %w", filepath.Base(p), err)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return binaries{}, fmt.Errorf("%s is not an executable", p)
		}
	}
	return b, nil
}

// debianBinDirs lists /usr/lib/postgresql/<version>/bin, newest version
// first.
func debianBinDirs() []string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin") // the pattern is valid
	version := func(dir string) int {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		if err != nil {
			return -1
		}
		return v
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return matches
}
