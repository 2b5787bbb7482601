package caddymodule

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

type closeRecorder struct {
	name  string
	order *[]string
}

func (c closeRecorder) Close() error {
	*c.order = append(*c.order, c.name)
	return nil
}

// Two loads of one data dir share one database (as across a reload); it
// closes, with its services in reverse order, only after the last release.
func TestSharedStateAcrossLoads(t *testing.T) {
	dir := t.TempDir()
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)

	first, err := acquireState(dir, nil, new(BadgerStorage), logger)
	if err != nil {
		t.Fatal(err)
	}
	second, err := acquireState(dir, nil, new(BadgerStorage), logger)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatal("second load opened another state for the same data dir")
	}

	var closed []string
	made := 0
	for _, name := range []string{"a", "b", "a"} {
		if _, err := first.service(name, func() (any, error) {
			made++
			return closeRecorder{name, &closed}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if made != 2 {
		t.Fatalf("service constructor ran %d times, want 2 (one per name)", made)
	}
	if _, err := first.service("broken", func() (any, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("constructor error was swallowed")
	}

	if err := dbOf(first).Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := releaseState(dir); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 0 {
		t.Fatalf("services closed while a load still used them: %v", closed)
	}
	if err := dbOf(second).View(func(txn *badger.Txn) error { _, err := txn.Get([]byte("k")); return err }); err != nil {
		t.Fatalf("database unusable after the first release: %v", err)
	}
	if err := releaseState(dir); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 2 || closed[0] != "b" || closed[1] != "a" {
		t.Fatalf("services closed as %v, want [b a]", closed)
	}
	if logs.FilterMessage("data directory closed").Len() != 1 {
		t.Fatal("database close not logged exactly once")
	}

	// Reopening the same dir works (the lock was released) and keeps data.
	third, err := acquireState(dir, nil, new(BadgerStorage), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseState(dir)
	if err := dbOf(third).View(func(txn *badger.Txn) error { _, err := txn.Get([]byte("k")); return err }); err != nil {
		t.Fatalf("data lost across close and reopen: %v", err)
	}
}

func TestBadgerLoggerAdapter(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	l := badgerLogger{zap.New(core).Sugar()}
	l.Warningf("disk %s", "slow")
	l.Errorf("broken %d", 1)
	got := logs.All()
	if len(got) != 2 || got[0].Level != zap.WarnLevel || got[0].Message != "disk slow" || got[1].Level != zap.ErrorLevel {
		t.Fatalf("unexpected log entries: %+v", got)
	}
}

// While one load holds a data dir, another app of the same dir that has not
// started (or has already stopped) still finds the open state.
func TestCurrentFallsBackToPooledState(t *testing.T) {
	dir := t.TempDir()
	holder, err := acquireState(dir, nil, new(BadgerStorage), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	idle := &App{dir: dir}
	if got := idle.current(); got != holder {
		t.Fatalf("current() = %p, want the pooled state %p", got, holder)
	}
	other := &App{dir: t.TempDir()}
	if other.current() != nil {
		t.Fatal("an app found the state of another data dir")
	}
	if err := releaseState(dir); err != nil {
		t.Fatal(err)
	}
	if idle.current() != nil {
		t.Fatal("current() returned a closed state")
	}
}

// A config whose encryption key differs from the one the open data dir
// was opened with is refused (the key of an open database cannot change),
// and the running config keeps its state.
func TestAcquireStateRefusesAnotherEncryptionKey(t *testing.T) {
	dir := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	held, err := acquireState(dir, key, new(BadgerStorage), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = releaseState(dir) })
	for name, other := range map[string][]byte{"no key": nil, "another key": []byte("fedcba9876543210fedcba9876543210")} {
		if _, err := acquireState(dir, other, new(BadgerStorage), zap.NewNop()); err == nil || !strings.Contains(err.Error(), "encryption_key") {
			t.Errorf("%s while the dir is open with a key: %v, want a refusal naming encryption_key", name, err)
		}
	}
	if err := dbOf(held).Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatalf("the running config lost its database: %v", err)
	}
	again, err := acquireState(dir, key, new(BadgerStorage), zap.NewNop())
	if err != nil || again != held {
		t.Fatalf("the same key again: %v", err)
	}
	if err := releaseState(dir); err != nil {
		t.Fatal(err)
	}
}

// dbOf returns the Badger database of a state opened with BadgerStorage.
func dbOf(st *sharedState) *badger.DB { return st.Stores.(badgerStores).DB() }
