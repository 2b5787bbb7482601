package badgerstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// uniqueKeys returns the subscription uniqueness keys stored for partner.
func uniqueKeys(t *testing.T, db *badger.DB, partner string) []string {
	t.Helper()
	var out []string
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(subUniquePref + partner + "\x00")})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			out = append(out, string(it.Item().Key()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storedCount returns the partner's stored subscription count.
func storedCount(t *testing.T, db *badger.DB, partner string) int {
	t.Helper()
	n := 0
	err := db.View(func(txn *badger.Txn) error {
		it, err := txn.Get([]byte(subCountPref + partner))
		if err != nil {
			return err
		}
		v, err := it.ValueCopy(nil)
		if err != nil {
			return err
		}
		n, err = strconv.Atoi(string(v))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A URL whose stored form differs from its comparison form (an upper-case
// scheme or host, a non-ASCII path) can be created, deleted and created
// again, any number of times, and leaves no key behind.
func TestSubscriptionDeleteRemovesTheNormalisedKey(t *testing.T) {
	for _, raw := range []string{
		"HTTP://127.0.0.1:9/upper",
		"http://127.0.0.1:9/ünïcödé/päth",
		"http://127.0.0.1:9/a b",
		"http://127.0.0.1:9/%7Euser/Ü", // an escaped and an unescaped form in one path
	} {
		db := openDB(t)
		st := newService(t, db, 0).Subscriptions()
		ctx := context.Background()
		for cycle := 1; cycle <= 3; cycle++ {
			sub, created, err := st.Create(ctx, "p1", raw, webhooks.EventLabelStatus)
			if err != nil || !created {
				t.Fatalf("%s, cycle %d: create = %v, created %v; want a new subscription", raw, cycle, err, created)
			}
			if err := st.Delete("p1", sub.ID); err != nil {
				t.Fatalf("%s, cycle %d: delete: %v", raw, cycle, err)
			}
			if keys := uniqueKeys(t, db, "p1"); len(keys) != 0 {
				t.Fatalf("%s, cycle %d: after delete the uniqueness keys %q remain, want none", raw, cycle, keys)
			}
			if n := storedCount(t, db, "p1"); n != 0 {
				t.Fatalf("%s, cycle %d: count %d after delete, want 0", raw, cycle, n)
			}
		}
	}
}

// writeOrphans stores what the earlier delete left behind: a uniqueness
// key naming a subscription that no longer exists, and a count that the
// orphan made wrong.
func writeOrphans(t *testing.T, db *badger.DB, partner string, n, count int) {
	t.Helper()
	err := db.Update(func(txn *badger.Txn) error {
		for i := range n {
			k := subUniquePref + partner + "\x00" + webhooks.EventLabelStatus + "\x00http://127.0.0.1:9/gone" + strconv.Itoa(i)
			if err := txn.Set([]byte(k), []byte("sub_gone"+strconv.Itoa(i))); err != nil {
				return err
			}
		}
		return txn.Set([]byte(subCountPref+partner), []byte(strconv.Itoa(count)))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// At start the store removes uniqueness keys whose subscription is gone
// and sets each partner's count to the subscriptions it really has, so
// orphans left by earlier versions neither answer 404 to a create nor
// escape the per-partner limit.
func TestSubscriptionRepairRemovesOrphansAtStart(t *testing.T) {
	db := openDB(t)
	s := newService(t, db, 0)
	keep, _, err := s.Subscriptions().Create(context.Background(), "p1", "http://127.0.0.1:9/keep", webhooks.EventLabelStatus)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	writeOrphans(t, db, "p1", 3, 7)

	st := newService(t, db, 2).Subscriptions()
	keys := uniqueKeys(t, db, "p1")
	if len(keys) != 1 || !strings.HasSuffix(keys[0], "/keep") {
		t.Fatalf("after the repair the uniqueness keys are %q, want only the kept subscription's", keys)
	}
	if n := storedCount(t, db, "p1"); n != 1 {
		t.Fatalf("after the repair the count is %d, want 1 (the one subscription)", n)
	}
	if _, created, err := st.Create(context.Background(), "p1", "http://127.0.0.1:9/gone0", webhooks.EventLabelStatus); err != nil || !created {
		t.Fatalf("creating what an orphan key named: %v, created %v; want a new subscription", err, created)
	}
	if got, err := st.Get("p1", keep.ID); err != nil || got.ID != keep.ID {
		t.Fatalf("the kept subscription after the repair: %+v %v", got, err)
	}
}

// A create that meets an orphan key (one the repair has not seen yet)
// replaces it instead of answering that the subscription does not exist.
func TestSubscriptionCreateReplacesAnOrphanKey(t *testing.T) {
	db := openDB(t)
	st := newService(t, db, 0).Subscriptions()
	writeOrphans(t, db, "p1", 1, 0)
	sub, created, err := st.Create(context.Background(), "p1", "http://127.0.0.1:9/gone0", webhooks.EventLabelStatus)
	if err != nil || !created {
		t.Fatalf("create over an orphan key: %v, created %v; want a new subscription", err, created)
	}
	if keys := uniqueKeys(t, db, "p1"); len(keys) != 1 {
		t.Fatalf("uniqueness keys %q, want the new subscription's only", keys)
	}
	if got, err := st.Get("p1", sub.ID); err != nil || got.ID != sub.ID {
		t.Fatalf("get the new subscription: %+v %v", got, err)
	}
}
