// Package errorregistrytest reads the partners' error registry
// (docs/partners/errors.md) for the tests that hold it to the code and to
// the OpenAPI document. It is imported by tests only.
package errorregistrytest

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TypeBase is the prefix of every problem type URI: the registry page, so
// that each type resolves to its entry's anchor.
const TypeBase = "https://github.com/fulfilgate/fulfilgate/blob/main/docs/partners/errors.md#"

// Kinds returns the problem kinds the registry at path documents: the
// "### <kind>" headings of its "## Problem types" section, in the order
// they appear. A registry that cannot be read, or has no entry there,
// fails t.
func Kinds(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kinds []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line[3:]) == "Problem types"
		case in && strings.HasPrefix(line, "### "):
			kinds = append(kinds, strings.TrimSpace(line[4:]))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if len(kinds) == 0 {
		t.Fatalf("%s has no \"### <kind>\" entries under \"## Problem types\"", path)
	}
	return kinds
}
