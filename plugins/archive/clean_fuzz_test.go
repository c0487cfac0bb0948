package main

import (
	"path"
	"strings"
	"testing"
)

// FuzzClean: an entry name clean accepts is relative, clean and never
// climbs out of the extract directory.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"a/b", "./a", "../a", "/etc/x", "a/../../b", "a\\..\\b", ".", "", "a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := clean(name)
		if err != nil || rel == "" {
			return
		}
		if path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("clean(%q) = %q", name, rel)
		}
		if j := path.Join("/x", rel); !strings.HasPrefix(j, "/x/") {
			t.Fatalf("clean(%q) = %q leads to %s", name, rel, j)
		}
	})
}
