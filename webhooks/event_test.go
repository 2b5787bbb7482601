package webhooks

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

var trickyIdentifiers = []string{
	"plain-123", `quo"te`, `back\slash`, "ctl\x00\x01\x1f\b\f\n\r\t", "<html>&amp;", "line\u2028sep\u2029",
	"emoji 📦🚚", "ünïcödé", "\x7f del", "/slash/", "invalid \xff utf8",
}

// TestPayloadBodyMatchesPython checks that Python re-serialising the body
// gives back the same bytes (what a receiver recomputing the signature over
// "the JSON serialisation of the body" does).
func TestPayloadBodyMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not available")
	}
	var lines []string
	for _, id := range trickyIdentifiers {
		lines = append(lines, string(Event{Name: EventLabelStatus, Identifier: id}.Payload().Body()))
	}
	script := `import sys, json
for line in sys.stdin.buffer.read().decode("utf-8").split("\n"):
    sys.stdout.buffer.write(json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n")`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("python3 returned %d lines, want %d", len(got), len(lines))
	}
	for i := range lines {
		if got[i] != lines[i] {
			t.Errorf("identifier %q: Go %s, Python %s", trickyIdentifiers[i], lines[i], got[i])
		}
	}
}

func TestPayloadBodyRoundTripsInGo(t *testing.T) {
	for _, id := range trickyIdentifiers {
		b := Event{Name: EventOutboundStatus, Identifier: id}.Payload().Body()
		var p Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if p.Type != "outbound.status-changed" || p.Resource != "outbound" {
			t.Fatalf("%q: %+v", id, p)
		}
		if p.Identifier != strings.ToValidUTF8(id, "\uFFFD") {
			t.Errorf("identifier %q came back as %q", id, p.Identifier)
		}
	}
	if ValidEvent("nope") || !ValidEvent(EventLabelStatus) || len(EventNames) != 7 {
		t.Fatal("event names")
	}
}
