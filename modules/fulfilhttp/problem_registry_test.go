package fulfilhttp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fulfilgate/fulfilgate/internal/errorregistrytest"
)

// errorRegistry is the partners' page that explains every problem type;
// ProblemTypeBase points at it.
const errorRegistry = "../../docs/partners/errors.md"

// Every problem kind the code can answer with has an entry (a "### <kind>"
// heading under "## Problem types") in the partners' error registry, so that
// every "type" URI a partner receives resolves to its explanation.
func TestEveryProblemKindIsInTheRegistry(t *testing.T) {
	emitted := emittedProblemKinds(t)
	documented := errorregistrytest.Kinds(t, errorRegistry)
	for _, kind := range emitted {
		if !slices.Contains(documented, kind) {
			t.Errorf("the code answers with problem kind %q, but %s has no \"### %s\" entry under \"## Problem types\"",
				kind, errorRegistry, kind)
		}
	}
}

// The registry lists only kinds the code still emits: a partner's code
// should not handle types that never come.
func TestTheRegistryListsOnlyEmittedKinds(t *testing.T) {
	emitted := emittedProblemKinds(t)
	for _, kind := range errorregistrytest.Kinds(t, errorRegistry) {
		if !slices.Contains(emitted, kind) {
			t.Errorf("%s documents problem kind %q, which no code in modules/fulfilhttp emits", errorRegistry, kind)
		}
	}
}

// The type URIs point at the registry page, so that each resolves to its
// entry's anchor.
func TestProblemTypeBaseIsTheRegistryPage(t *testing.T) {
	if want := errorregistrytest.TypeBase; ProblemTypeBase != want {
		t.Fatalf("ProblemTypeBase = %q, want %q (the registry page, so that every type URI resolves)", ProblemTypeBase, want)
	}
}

// emittedProblemKinds reads the non-test sources of this package and of the
// handler packages below it and returns every problem kind they can answer
// with, sorted: the kind argument of each WriteProblem and NewProblem call, each
// ProblemTypeBase + "<kind>" (outside WriteProblem itself), and the kinds
// upstreamProblem returns. A kind the test cannot see (not a string literal
// in those places) fails the test, so that no kind escapes the registry.
func emittedProblemKinds(t *testing.T) []string {
	t.Helper()
	// This package and its handler packages below it.
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	kinds := map[string]bool{}
	literal := func(e ast.Expr, where string) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s: %s is not a string literal; write the problem kind as a literal so that the registry test sees it",
				fset.Position(e.Pos()), where)
			return
		}
		kind, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		kinds[kind] = true
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Name.Name == "WriteProblem" || fn.Name.Name == "NewProblem" {
				continue // they build the URI from their argument, checked at each call
			}
			fromUpstream := calls(fn.Body, "upstreamProblem")
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if funcName(n.Fun) == "NewProblem" && len(n.Args) >= 2 {
						literal(n.Args[1], "the kind argument of NewProblem")
					}
					if funcName(n.Fun) == "WriteProblem" && len(n.Args) >= 3 {
						if _, isVar := n.Args[2].(*ast.Ident); isVar && fromUpstream {
							return true // a kind upstreamProblem returned: collected there
						}
						literal(n.Args[2], "the kind argument of WriteProblem")
					}
				case *ast.BinaryExpr:
					if funcName(n.X) == "ProblemTypeBase" && n.Op == token.ADD {
						literal(n.Y, "the kind after ProblemTypeBase +")
					}
				case *ast.ReturnStmt:
					if fn.Name.Name == "upstreamProblem" && len(n.Results) == 3 {
						literal(n.Results[1], "the kind upstreamProblem returns")
					}
				}
				return true
			})
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found only %d problem kinds in the sources (%v): the search no longer matches the code", len(kinds), kinds)
	}
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// calls reports whether body calls the function named name.
func calls(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if funcName(c.Fun) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// funcName is the name an identifier or a qualified identifier
// (fulfilhttp.WriteProblem) refers to, else "".
func funcName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
