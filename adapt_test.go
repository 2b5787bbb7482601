package fulfilgate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // registers the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"      // reverse_proxy, respond, ... used by the goldens
)

var updateGoldens = flag.Bool("update", false, "rewrite the golden .json files of testdata/adapt from the adapter's output")

// TestAdaptGoldens runs every testdata/adapt/<name>.caddyfile through the
// caddyfile adapter and compares the JSON with <name>.json beside it
// (indented with tabs). The input must be formatted (`caddy fmt`): the
// adapter's warnings fail the test. Rewrite the goldens with
//
//	go test . -run TestAdaptGoldens -update
//
// and review the diff.
func TestAdaptGoldens(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "adapt", "*.caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/adapt/*.caddyfile found")
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	if adapter == nil {
		t.Fatal("caddyfile adapter not registered")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".caddyfile")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, warnings, err := adapter.Adapt(src, map[string]any{"filename": in})
			if err != nil {
				t.Fatalf("adapting %s: %v", in, err)
			}
			for _, w := range warnings {
				t.Errorf("%s: adapter warning: %s", in, w.String())
			}
			var got bytes.Buffer
			if err := json.Indent(&got, out, "", "\t"); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			golden := strings.TrimSuffix(in, ".caddyfile") + ".json"
			if *updateGoldens {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s adapts differently from %s:\n%s", in, golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

// lineDiff shows the first differing lines of want and got, with context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	var b strings.Builder
	for j := from; j < i; j++ {
		b.WriteString("  " + w[j] + "\n")
	}
	for j := i; j < min(len(w), i+8); j++ {
		b.WriteString("- " + w[j] + "\n")
	}
	for j := i; j < min(len(g), i+8); j++ {
		b.WriteString("+ " + g[j] + "\n")
	}
	return b.String()
}
