package fulfilhttp

import (
	mrand "math/rand/v2"
	"regexp"
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

// Every generator the pool makes for request ids is seeded afresh: two of
// them never give the same ids.
func TestEachRequestIDGeneratorHasASeedOfItsOwn(t *testing.T) {
	a, b := idSources.New().(*mrand.ChaCha8), idSources.New().(*mrand.ChaCha8)
	for range 4 {
		if x, y := a.Uint64(), b.Uint64(); x == y {
			t.Fatalf("two generators gave the same number %#x: they share a seed", x)
		}
	}
}
