package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The link checker: every relative link of README.md, CHANGELOG.md and the
// Markdown pages under docs/ points at a file that exists, and every anchor
// (#fragment) at a heading or an explicit anchor of the page it names, as
// GitHub renders them. Links into this repository written as
// https://github.com/fulfilgate/fulfilgate/blob/main/<path>#<anchor> (the
// problem type URIs, for example) are checked the same way, also in
// docs/openapi.yaml. Other absolute links are not followed.

// repoURL is how pages link into this repository absolutely.
var repoURL = regexp.MustCompile(`^https://github\.com/fulfilgate/fulfilgate/(?:blob|tree)/main/([^#?]*)(#.*)?$`)

var (
	inlineLink   = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLink      = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	rawRepoURL   = regexp.MustCompile(`https://github\.com/fulfilgate/fulfilgate/(?:blob|tree)/main/[^\s"'<>)\]]*`)
	htmlAnchor   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineCode   = regexp.MustCompile("`[^`]*`")
	headingLinks = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// slug is GitHub's anchor for a heading's text: lower case, the markup
// removed, every character but letters, digits, marks, '_', '-' and
// spaces dropped, spaces turned into '-'.
func slug(heading string) string {
	heading = headingLinks.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '_', r == '-':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownPage is a page's anchors and links, outside code blocks.
type markdownPage struct {
	anchors map[string]bool
	links   []string
}

func parsePage(text string) markdownPage {
	p := markdownPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		if strings.HasPrefix(line, "#") {
			level := len(line) - len(strings.TrimLeft(line, "#"))
			if level <= 6 && len(line) > level && line[level] == ' ' {
				s := slug(strings.TrimSpace(line[level+1:]))
				if n := seen[s]; n > 0 {
					p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
				} else {
					p.anchors[s] = true
				}
				seen[s]++
			}
		}
		code := inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(code, -1) {
			p.links = append(p.links, m[1])
		}
		for _, m := range refLink.FindAllStringSubmatch(code, -1) {
			p.links = append(p.links, m[1])
		}
	}
	return p
}

// linkChecker checks links between the files under root.
type linkChecker struct {
	root  string
	pages map[string]markdownPage
}

func (c *linkChecker) page(path string) (markdownPage, error) {
	if p, ok := c.pages[path]; ok {
		return p, nil
	}
	b, err := os.ReadFile(filepath.Join(c.root, path))
	if err != nil {
		return markdownPage{}, err
	}
	p := parsePage(string(b))
	c.pages[path] = p
	return p, nil
}

// check returns what is wrong with link, found in the file from (both
// relative to root), or "" if it resolves.
func (c *linkChecker) check(from, link string) string {
	target, fragment, _ := strings.Cut(link, "#")
	switch {
	case strings.HasPrefix(link, "mailto:"):
		return ""
	case strings.Contains(link, "://"):
		m := repoURL.FindStringSubmatch(link)
		if m == nil {
			return "" // outside the repository: not followed
		}
		target = strings.TrimSuffix(m[1], "/")
		fragment = strings.TrimPrefix(m[2], "#")
		if target == "" {
			target = "."
		}
	case target == "":
		target = from
	default:
		target = filepath.Join(filepath.Dir(from), target)
	}
	target = filepath.Clean(target)
	if strings.HasPrefix(target, "..") {
		return fmt.Sprintf("%s leaves the repository", link)
	}
	info, err := os.Stat(filepath.Join(c.root, target))
	if err != nil {
		return fmt.Sprintf("%s: %s does not exist", link, target)
	}
	if fragment == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(target, ".md") {
		return fmt.Sprintf("%s: an anchor into %s, which is not a Markdown page", link, target)
	}
	p, err := c.page(target)
	if err != nil {
		return err.Error()
	}
	if !p.anchors[fragment] {
		return fmt.Sprintf("%s: %s has no anchor #%s", link, target, fragment)
	}
	return ""
}

// checkTree checks every Markdown page's links, and the repository links of
// the other files given, under root.
func checkTree(root string, pages, others []string) []string {
	c := &linkChecker{root: root, pages: map[string]markdownPage{}}
	var problems []string
	for _, path := range pages {
		p, err := c.page(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, link := range p.links {
			if msg := c.check(path, link); msg != "" {
				problems = append(problems, path+": "+msg)
			}
		}
	}
	for _, path := range others {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, link := range rawRepoURL.FindAllString(string(b), -1) {
			if msg := c.check(path, link); msg != "" {
				problems = append(problems, path+": "+msg)
			}
		}
	}
	return problems
}

// repoPages lists README.md, CHANGELOG.md and every Markdown page under
// docs/, relative to the repository root.
func repoPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "CHANGELOG.md"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, filepath.Join("docs", path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// Every relative link and anchor of the README and the docs resolves.
func TestDocsLinksResolve(t *testing.T) {
	pages := repoPages(t)
	if len(pages) < 20 {
		t.Fatalf("found only %d pages: %v", len(pages), pages)
	}
	for _, problem := range checkTree("..", pages, []string{"docs/openapi.yaml"}) {
		t.Error(problem)
	}
}

// The checker finds what it is there to find: a missing file, a missing
// anchor, a link out of the tree, and a broken repository URL; and it
// accepts what is right, code blocks and outside links included.
func TestLinkCheckerFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/x.md", "# X\n")
	write("docs/a.md", "# Page A\n\n## Same\n\n## Same\n\n### `code` and [link](x.md): 1.2\n\n<a id=\"explicit\"></a>\n")
	write("README.md", strings.Join([]string{
		"[ok](docs/a.md) [ok](docs/a.md#page-a) [ok](docs/a.md#same-1) [ok](docs/a.md#code-and-link-12)",
		"[ok](docs/a.md#explicit) [ok](docs/) [ok](https://example.com/x#y) [ok](#readme)",
		"[ok](https://github.com/fulfilgate/fulfilgate/blob/main/docs/a.md#same)",
		"`[not a link](nowhere.md)`",
		"```", "[not a link](nowhere.md)", "```",
		"[bad](docs/missing.md) [bad](docs/a.md#nope) [bad](../outside.md) [bad](#nope)",
		"[bad](https://github.com/fulfilgate/fulfilgate/blob/main/docs/a.md#gone)",
		"[bad]: docs/b.md",
		"# README",
	}, "\n"))
	got := checkTree(root, []string{"README.md", "docs/a.md"}, nil)
	want := []string{
		"README.md: docs/missing.md: docs/missing.md does not exist",
		"README.md: docs/a.md#nope: docs/a.md has no anchor #nope",
		"README.md: ../outside.md leaves the repository",
		"README.md: #nope: README.md has no anchor #nope",
		"README.md: https://github.com/fulfilgate/fulfilgate/blob/main/docs/a.md#gone: docs/a.md has no anchor #gone",
		"README.md: docs/b.md: docs/b.md does not exist",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the checker reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Anchors are made as GitHub makes them.
func TestSlugIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Refresh on 401 and on 403":                    "refresh-on-401-and-on-403",
		"Idempotency: `x-hook-id`":                     "idempotency-x-hook-id",
		"fulfilment_token":                             "fulfilment_token",
		"tokens (in the fulfilment global option)":     "tokens-in-the-fulfilment-global-option",
		"The admin endpoint is never a webhook target": "the-admin-endpoint-is-never-a-webhook-target",
		"[Link](x.md) text":                            "link-text",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
