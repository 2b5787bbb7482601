package fulfilhttp

import (
	"encoding/hex"
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

// formatUUID writes the text form encoding/hex and the 8-4-4-4-12 layout
// give, for every byte value in every position.
func TestFormatUUIDIsTheHexLayout(t *testing.T) {
	for v := range 256 {
		for pos := range 16 {
			var u [16]byte
			for i := range u {
				u[i] = byte(v + 37*i)
			}
			u[pos] = byte(v)
			var s [36]byte
			formatUUID(&s, &u)
			h := hex.EncodeToString(u[:])
			want := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
			if string(s[:]) != want {
				t.Fatalf("formatUUID(%x) = %s, want %s", u, s[:], want)
			}
		}
	}
}
