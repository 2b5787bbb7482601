package datadir

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSecureCreatesAPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	found, err := Secure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, dir); m != DirMode {
		t.Fatalf("new data dir has mode %#o, want %#o", m, DirMode)
	}
	if len(found) != 0 {
		t.Fatalf("a new dir reported %v", found)
	}
}

// An existing data dir left readable by others (an older gateway made its
// files 0644) is tightened at start, and each loosened path is reported.
func TestSecureTightensAnExistingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	files := map[string]fs.FileMode{"000001.vlog": 0o644, "MANIFEST": 0o600, "KEYREGISTRY": 0o640}
	for name, mode := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	found, err := Secure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, dir); m != DirMode {
		t.Errorf("data dir left at %#o, want %#o", m, DirMode)
	}
	for name := range files {
		if m := modeOf(t, filepath.Join(dir, name)); m != FileMode {
			t.Errorf("%s left at %#o, want %#o", name, m, FileMode)
		}
	}
	reported := map[string]fs.FileMode{}
	for _, f := range found {
		if f.Err != nil {
			t.Errorf("%s: %v", f.Path, f.Err)
		}
		reported[filepath.Base(f.Path)] = f.Was
	}
	want := map[string]fs.FileMode{"data": 0o755, "000001.vlog": 0o644, "KEYREGISTRY": 0o640}
	if len(reported) != len(want) {
		t.Fatalf("reported %v, want %v (MANIFEST was already private)", reported, want)
	}
	for name, was := range want {
		if reported[name] != was {
			t.Errorf("%s reported as %#o, want %#o", name, reported[name], was)
		}
	}
}
