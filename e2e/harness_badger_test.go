package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// A data dir the test process has written into (writeBadger) is unlocked
// as soon as writeBadger returns, even while other tests start processes
// (whose children would otherwise inherit Badger's directory lock until
// they exec): a gateway started on it right after never finds it locked.
func TestWriteBadgerLeavesTheDataDirUnlocked(t *testing.T) {
	t.Parallel()
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to start processes with")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = exec.Command(trueBin).Run()
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 30 {
		dir := filepath.Join(t.TempDir(), "data")
		writeBadger(t, dir, "k", []byte("v"))
		if err := tryLockDir(dir); err != nil {
			t.Fatalf("attempt %d: the data dir is still locked after writeBadger returned: %v", i, err)
		}
	}
}

// tryLockDir takes and drops dir's flock, as Badger takes it, without
// waiting.
func tryLockDir(dir string) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
