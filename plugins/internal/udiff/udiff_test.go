package udiff

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnifiedGolden(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\n", "a\n", ""},
		{"change one line", "a\nb\nc\n", "a\nB\nc\n", "--- o\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"from empty", "", "x\n", "--- o\n+++ n\n@@ -0,0 +1 @@\n+x\n"},
		{"to empty", "x\n", "", "--- o\n+++ n\n@@ -1 +0,0 @@\n-x\n"},
		{"no final newline", "a", "a\n", "--- o\n+++ n\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\nY\n",
			"--- o\n+++ n\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -8,4 +8,4 @@\n 8\n 9\n 10\n-11\n+Y\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Unified("o", "n", []byte(tc.old), []byte(tc.new), 100)
			if !ok || got != tc.want {
				t.Fatalf("Unified = %v %q, want %q", ok, got, tc.want)
			}
		})
	}
}

func TestUnifiedBound(t *testing.T) {
	var a, b strings.Builder
	for i := range 50 {
		a.WriteString("a" + string(rune('0'+i%10)) + "\n")
		b.WriteString("b" + string(rune('0'+i%10)) + "\n")
	}
	if _, ok := Unified("o", "n", []byte(a.String()), []byte(b.String()), 99); ok {
		t.Fatal("100 edits fit a bound of 99")
	}
	if _, ok := Unified("o", "n", []byte(a.String()), []byte(b.String()), 100); !ok {
		t.Fatal("100 edits did not fit a bound of 100")
	}
}

// TestUnifiedPatch applies random diffs with patch(1): the diff must turn
// the old text into the new one exactly.
func TestUnifiedPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch(1) not installed")
	}
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e", "\n"}
	gen := func() string {
		var s strings.Builder
		for range r.IntN(40) {
			s.WriteString(words[r.IntN(len(words))])
		}
		return s.String()
	}
	dir := t.TempDir()
	for i := range 200 {
		old, new := gen(), gen()
		d, ok := Unified("f", "f", []byte(old), []byte(new), 1000)
		if !ok {
			t.Fatalf("case %d: bound hit", i)
		}
		f := filepath.Join(dir, "f")
		if err := os.WriteFile(f, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if d == "" {
			if old != new {
				t.Fatalf("case %d: empty diff for different texts", i)
			}
			continue
		}
		cmd := exec.Command(patch, "-s", "--no-backup-if-mismatch", f)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v\n%s\nold %q\nnew %q\ndiff:\n%s", i, err, out, old, new, d)
		}
		got, _ := os.ReadFile(f)
		if string(got) != new {
			t.Fatalf("case %d: patched %q, want %q\ndiff:\n%s", i, got, new, d)
		}
	}
}
