package fulfilment

import (
	"testing"

	"github.com/fulfilgate/fulfilgate/tokens"
)

// Without a portal handler the client limit is the portal's default; with
// several, the smallest max_clients wins, whatever their order; a value out
// of bounds is ignored.
func TestClientLimitIsTheSmallestOfThePortals(t *testing.T) {
	a := new(App)
	if got := a.ClientLimit(); got != tokens.DefaultClientLimit {
		t.Fatalf("ClientLimit without a portal = %d, want the default %d", got, tokens.DefaultClientLimit)
	}
	for _, n := range []int{7, 3, 0, tokens.MaxClientLimit + 1, 5} {
		a.NoteClientLimit(n)
	}
	if got := a.ClientLimit(); got != 3 {
		t.Fatalf("ClientLimit after portals with 7, 3 and 5 (and 0, 101 ignored) = %d, want 3", got)
	}
}
