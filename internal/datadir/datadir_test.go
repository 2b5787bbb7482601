package datadir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// The options must open (ValueThreshold must stay below 15 % of the
// memtable, or badger.Open refuses them) and keep the durability settings.
func TestOptionsOpenAndPersist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	o := Options(dir, nil)
	if !o.SyncWrites || o.NumVersionsToKeep != 1 || !o.DetectConflicts {
		t.Fatalf("SyncWrites %v, NumVersionsToKeep %d, DetectConflicts %v", o.SyncWrites, o.NumVersionsToKeep, o.DetectConflicts)
	}
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte("k"))
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err == nil && string(v) != "v" {
			err = fmt.Errorf("value %q", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A webhook publish page (500 deliveries of about 400 bytes) fits in one
// transaction; a much bigger one is refused with ErrTxnTooBig, which the
// queue splits on, rather than failing otherwise.
func TestTransactionLimit(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := bytes.Repeat([]byte("x"), 400)
	fill := func(n int) error {
		txn := db.NewTransaction(true)
		defer txn.Discard()
		for i := 0; i < n; i++ {
			if err := txn.Set([]byte(fmt.Sprintf("wh/due/%08d", i)), val); err != nil {
				return err
			}
		}
		return txn.Commit()
	}
	if err := fill(500); err != nil {
		t.Fatalf("500 deliveries: %v", err)
	}
	if err := fill(5000); !errors.Is(err, badger.ErrTxnTooBig) {
		t.Fatalf("5000 deliveries: got %v, want ErrTxnTooBig", err)
	}
}

func TestOpenBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	db, err := Open(file, Options(file, nil))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A data dir below a regular file cannot be created.
	bad := filepath.Join(file, "MANIFEST", "x")
	if _, err := Open(bad, Options(bad, nil)); err == nil {
		t.Fatal("opening below a regular file succeeded")
	}
}

// A second Open of a data dir that is open (here in this process; between
// two gateways the same lock is taken) is refused with ErrInUse, naming the
// process that holds it and what to do.
func TestOpenRefusesADataDirInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	second, err := Open(dir, Options(dir, nil))
	if err == nil {
		second.Close()
		t.Fatal("a second Open of the same data dir succeeded, want it refused")
	}
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v, want an error wrapping ErrInUse", err)
	}
	if want := fmt.Sprintf("locked by process %d", os.Getpid()); !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "same data_dir") {
		t.Fatalf("second Open: %q, want it to say %q and name the data_dir", err, want)
	}
}
