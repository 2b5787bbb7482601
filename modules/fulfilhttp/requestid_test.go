package fulfilhttp

import (
	"regexp"
	"sync"
	"testing"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewRequestID()
		if !uuidV4.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}

// Ids made at once on many goroutines, across many draws of random bytes,
// are all different: no bytes of a draw go to two ids.
func TestRequestIDsMadeConcurrentlyAreDistinct(t *testing.T) {
	const goroutines, each = 8, 40 * idsPerDraw
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				ids[g] = append(ids[g], NewRequestID())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*each)
	for _, list := range ids {
		for _, id := range list {
			if !uuidV4.MatchString(id) {
				t.Fatalf("%q is not a version 4 UUID", id)
			}
			if seen[id] {
				t.Fatalf("%q made twice among %d ids", id, goroutines*each)
			}
			seen[id] = true
		}
	}
}
