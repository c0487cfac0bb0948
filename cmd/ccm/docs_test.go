package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// mdLink is a Markdown link target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// specPointer is a reference to the specification this project was
	// built from, which is not part of the repository.
	specPointer = regexp.MustCompile(`(?:manifest|resources|cli|plugins)\.md ?§|peer-notes|shared/spec|(?:^|[^/\w])(?:cli|manifest)\.md`)
	// docPath is a path to a page under docs/ named in Go source.
	docPath = regexp.MustCompile(`docs/[\w.-]+\.md`)
	heading = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// TestDocsHold keeps the documentation honest: the README's index lists
// every page of docs/, every relative link and #anchor resolves, Go files
// name only docs pages that exist, and nothing points at the specification
// files, which are not in the repository.
func TestDocsHold(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	readme := read(t, filepath.Join(root, "README.md"))
	for _, p := range pages {
		rel := "docs/" + filepath.Base(p)
		if !strings.Contains(readme, "]("+rel+")") {
			t.Errorf("README.md's documentation index does not link %s", rel)
		}
	}

	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		text := read(t, p)
		if m := specPointer.FindString(text); m != "" {
			t.Errorf("%s points at the specification (%q); link a docs/ page or drop it", rel(root, p), m)
		}
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links %s, which does not exist", rel(root, p), target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !hasAnchor(read(t, dest), anchor) {
				t.Errorf("%s links %s: no heading has the anchor #%s", rel(root, p), target, anchor)
			}
		}
	}

	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		text := read(t, p)
		if p == filepath.Join(root, "cmd", "ccm", "docs_test.go") {
			return nil
		}
		if m := specPointer.FindString(text); m != "" {
			t.Errorf("%s points at the specification (%q); link a docs/ page or drop it", rel(root, p), m)
		}
		for _, m := range docPath.FindAllString(text, -1) {
			if _, err := os.Stat(filepath.Join(root, m)); err != nil {
				t.Errorf("%s names %s, which does not exist", rel(root, p), m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}

// hasAnchor reports whether a heading of the Markdown text has GitHub's
// anchor slug: lowercase, punctuation dropped, spaces as hyphens.
func hasAnchor(text, anchor string) bool {
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		if slug(m[1]) == anchor {
			return true
		}
	}
	return false
}

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
