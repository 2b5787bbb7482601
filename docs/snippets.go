package docs

import (
	"embed"
	"fmt"
)

// The signature-verification snippets partners are given, in
// partners/snippets: each checks the x-hook-signature of a saved delivery
// (the body on standard input, WEBHOOK_SECRET and X_HOOK_SIGNATURE in the
// environment) and shows how a receiver calls it.
//
//go:embed partners/snippets/verify.go partners/snippets/verify.js partners/snippets/verify.py partners/snippets/verify.sh
var snippetFiles embed.FS

// Snippet is one language's verification snippet.
type Snippet struct {
	Language string // as partners name it: "Go", "Node.js", ...
	File     string // its file name, e.g. verify.js
	Run      string // the command that checks a saved delivery
	Source   string
}

// snippetList is the snippets in the order they are shown.
var snippetList = []Snippet{
	{Language: "Go", File: "verify.go", Run: "go run verify.go < body.json"},
	{Language: "Node.js", File: "verify.js", Run: "node verify.js < body.json"},
	{Language: "Python", File: "verify.py", Run: "python3 verify.py < body.json"},
	{Language: "Shell (openssl)", File: "verify.sh", Run: "sh verify.sh < body.json"},
}

// VerificationSnippets returns the snippets with their sources.
func VerificationSnippets() ([]Snippet, error) {
	out := make([]Snippet, len(snippetList))
	for i, s := range snippetList {
		src, err := snippetFiles.ReadFile("partners/snippets/" + s.File)
		if err != nil {
			return nil, fmt.Errorf("reading snippet %s: %w", s.File, err)
		}
		s.Source = string(src)
		out[i] = s
	}
	return out, nil
}
