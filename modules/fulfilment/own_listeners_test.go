package fulfilment

import (
	"slices"
	"testing"
)

// The gateway's own listeners come from the config: the admin endpoint
// (its address, the default when none is set, nothing when disabled or on
// a unix socket), the remote admin endpoint, and every TCP listen address
// of the http app's servers (a name or no host meaning every address of
// this host). If Caddy ever renames the context field the admin address
// is read from, this test fails before any deployment relies on it.
func TestAdminListenersFromTheConfig(t *testing.T) {
	servers := `"apps":{"http":{"servers":{"a":{"listen":[":8080","127.0.0.1:9000-9002","localhost:7000","unix//tmp/fg-test.sock","udp/:8443"]}}}}`
	for _, tc := range []struct {
		name, admin string
		want        []string
	}{
		{"admin address", `"admin":{"listen":"127.0.0.1:24019","remote":{"listen":"[::1]:24021"}},`,
			[]string{"127.0.0.1:24019", "[::1]:24021", "[::]:8080", "127.0.0.1:9000-9002", "[::]:7000"}},
		{"default admin", ``, []string{"[::]:2019", "[::]:8080", "127.0.0.1:9000-9002", "[::]:7000"}},
		{"admin on a unix socket", `"admin":{"listen":"unix//tmp/fg-admin.sock"},`,
			[]string{"[::]:8080", "127.0.0.1:9000-9002", "[::]:7000"}},
		{"admin disabled", `"admin":{"disabled":true},`, []string{"[::]:8080", "127.0.0.1:9000-9002", "[::]:7000"}},
	} {
		ctx := provisioned(t, "{"+tc.admin+servers+"}")
		got, notes := ownListeners(ctx)
		if len(notes) != 0 {
			t.Errorf("%s: notes %q, want none", tc.name, notes)
		}
		if s := describe(got); !slices.Equal(s, tc.want) {
			t.Errorf("%s: own listeners %q, want %q", tc.name, s, tc.want)
		}
	}
}
