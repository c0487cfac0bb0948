package privatedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsure(t *testing.T) {
	base := t.TempDir()
	made := filepath.Join(base, "a", "b")
	if err := Ensure(made, 0o700); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if fi, err := os.Stat(made); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want mode 0700", fi, err)
	}
	if err := Ensure(made, 0o700); err != nil {
		t.Fatalf("an existing private directory: %v", err)
	}

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(made, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{open: "writable by group or others", link: "not a directory", file: "not a directory"}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases[other] = "owned by uid 65534"
	}
	for dir, want := range cases {
		if err := Ensure(dir, 0o700); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Ensure(%s) = %v, want %q", dir, err, want)
		}
	}
}
