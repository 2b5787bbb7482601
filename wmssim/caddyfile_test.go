package wmssim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	on, off := true, false
	cases := []struct {
		name, input string
		want        Handler
		err         string
	}{
		{"bare", `wms_simulator`, Handler{}, ""},
		{"name arg", `wms_simulator north`, Handler{Name: "north"}, ""},
		{"empty block", "wms_simulator {\n}", Handler{}, ""},
		{"block", "wms_simulator {\n name south\n seed off\n}", Handler{Name: "south", Seed: &off}, ""},
		{"seed on", "wms_simulator {\n seed on\n}", Handler{Seed: &on}, ""},
		{"seed true", "wms_simulator {\n seed true\n}", Handler{Seed: &on}, ""},
		{"seed bad", "wms_simulator {\n seed maybe\n}", Handler{}, "seed must be on or off"},
		{"seed missing", "wms_simulator {\n seed\n}", Handler{}, "wrong argument count"},
		{"seed extra", "wms_simulator {\n seed on off\n}", Handler{}, "wrong argument count"},
		{"name twice", "wms_simulator a {\n name b\n}", Handler{}, "name already set"},
		{"name missing", "wms_simulator {\n name\n}", Handler{}, "wrong argument count"},
		{"name extra", "wms_simulator {\n name a b\n}", Handler{}, "wrong argument count"},
		{"two args", `wms_simulator a b`, Handler{}, "wrong argument count"},
		{"unknown option", "wms_simulator {\n outage 5\n}", Handler{}, `unrecognized wms_simulator option "outage"`},
		{"long name", "wms_simulator " + strings.Repeat("n", 129), Handler{}, "longer than 128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(c.input))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, c.want) {
				t.Fatalf("got %+v (seed %v), want %+v", h, h.Seed, c.want)
			}
		})
	}
}
