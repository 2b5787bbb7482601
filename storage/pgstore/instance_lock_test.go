package pgstore

import (
	"context"
	"errors"
	"testing"
)

func TestASecondInstanceOnTheDatabaseIsRefusedUntilTheFirstLetsGo(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	a, b := instance(t, dsn), instance(t, dsn)
	ctx := context.Background()
	release, err := a.LockSoleInstance(ctx)
	if err != nil {
		t.Fatalf("the first instance's lock: %v", err)
	}
	if _, err := b.LockSoleInstance(ctx); !errors.Is(err, ErrAnotherInstance) {
		t.Fatalf("a second instance's lock: %v, want ErrAnotherInstance", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	releaseB, err := b.LockSoleInstance(ctx)
	if err != nil {
		t.Fatalf("the second instance's lock after the first let go: %v", err)
	}
	if err := releaseB(); err != nil {
		t.Fatal(err)
	}
}

func TestTheInstanceLockIsPerDatabase(t *testing.T) {
	a, b := instance(t, migratedPool(t).Config().ConnString()), instance(t, migratedPool(t).Config().ConnString())
	ra, err := a.LockSoleInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ra()
	rb, err := b.LockSoleInstance(context.Background())
	if err != nil {
		t.Fatalf("an instance on another database was refused: %v", err)
	}
	rb()
}
