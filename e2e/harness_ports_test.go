package e2e

import "testing"

func TestPortRangeComesFromTheEnvironment(t *testing.T) {
	if first, last := portRange("41000-41999"); first != 41000 || last != 41999 {
		t.Fatalf("FULFILGATE_E2E_PORTS=41000-41999 gave %d-%d, want 41000-41999", first, last)
	}
	if first, last := portRange(""); first != 20000 || last != 32000 {
		t.Fatalf("no FULFILGATE_E2E_PORTS gave %d-%d, want the default 20000-32000", first, last)
	}
	for _, bad := range []string{"41000", "a-b", "42000-41000", "80-90", "60000-70000"} {
		if first, last := portRange(bad); first != 20000 || last != 32000 {
			t.Errorf("FULFILGATE_E2E_PORTS=%q gave %d-%d, want the default 20000-32000", bad, first, last)
		}
	}
}
