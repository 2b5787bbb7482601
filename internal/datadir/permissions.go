package datadir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The modes a data directory and its files should have: the directory
// holds the token signing keys, the secret-hashing pepper and the webhook
// keys, so nobody but the gateway's user may list or read it.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// Finding is what Secure found about one path: its mode was open to others
// (Was), and either it was tightened or the gateway could not (Err: for
// example, another user owns it).
type Finding struct {
	Path string
	Was  fs.FileMode
	Err  error
}

func (f Finding) String() string {
	if f.Err != nil {
		return fmt.Sprintf("%s is readable by others (mode %#o) and could not be tightened: %v", f.Path, f.Was, f.Err)
	}
	return fmt.Sprintf("%s was readable by others (mode %#o); tightened", f.Path, f.Was)
}

// Secure creates dir with DirMode when missing, and otherwise takes away
// every group and other permission from dir and the files directly in it
// (Badger keeps its files there), where the current user owns them. It
// reports each path that had such permissions. Badger creates its table and
// log files with mode 0666 less the umask, so files it makes later may be
// 0644 again: the directory's 0700 is what keeps them private (run the
// gateway with umask 077, e.g. systemd's UMask=0077, to have them 0600 as
// well).
func Secure(dir string) ([]Finding, error) {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	var found []Finding
	check := func(path string, want fs.FileMode) error {
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 == 0 {
			return nil
		}
		f := Finding{Path: path, Was: fi.Mode().Perm()}
		if uid, ok := fileOwner(fi); ok && uid != os.Geteuid() {
			f.Err = fmt.Errorf("owned by uid %d, not by the gateway's user (uid %d)", uid, os.Geteuid())
		} else if err := os.Chmod(path, fi.Mode().Perm()&want); err != nil {
			f.Err = err
		}
		found = append(found, f)
		return nil
	}
	if err := check(dir, DirMode); err != nil {
		return nil, fmt.Errorf("checking data dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading data dir: %w", err)
	}
	for _, e := range entries {
		want := FileMode
		if e.IsDir() {
			want = DirMode
		}
		if err := check(filepath.Join(dir, e.Name()), want); err != nil {
			return nil, fmt.Errorf("checking data dir: %w", err)
		}
	}
	return found, nil
}
