package fstree

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDescribeSeesEveryChange: content, mode, a new path, a link's target
// and a touched time each change the description; reading does not.
func TestDescribeSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	before := Describe(t, dir)
	if _, err := os.ReadFile(f); err != nil {
		t.Fatal(err)
	}
	if got := Describe(t, dir); got != before {
		t.Fatalf("a read changed the description:\n%s\nwas\n%s", got, before)
	}
	old := time.Now().Add(-time.Hour)
	for name, change := range map[string]func() error{
		"content": func() error { return os.WriteFile(f, []byte("b"), 0o644) },
		"mode":    func() error { return os.Chmod(f, 0o600) },
		"new":     func() error { return os.WriteFile(filepath.Join(dir, "g"), nil, 0o644) },
		"target": func() error {
			if err := os.Remove(filepath.Join(dir, "l")); err != nil {
				return err
			}
			return os.Symlink("g", filepath.Join(dir, "l"))
		},
		"mtime": func() error { return os.Chtimes(f, old, old) },
	} {
		prev := Describe(t, dir)
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if Describe(t, dir) == prev {
			t.Errorf("%s: the description did not change", name)
		}
	}
}
