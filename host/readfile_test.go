package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// TestReadFile: the engine's own reads (templates, child manifests) pass
// the same grant check as a plugin's ccm_fs_read, symlinks resolved.
func TestReadFile(t *testing.T) {
	h, err := New(WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	dir := t.TempDir()
	for name, content := range map[string]string{"in/a.txt": "inside", "secret": "s3cret"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "in", "link")); err != nil {
		t.Fatal(err)
	}
	confined := trust.Caller{Grants: trust.Chain{{FSRead: []string{dir + "/in/**"}}}}
	tests := []struct {
		name   string
		caller trust.Caller
		path   string
		want   string // content, or "!" + error text
	}{
		{"unconfined reads anything", trust.Caller{}, dir + "/secret", "s3cret"},
		{"inside the grant", confined, dir + "/in/a.txt", "inside"},
		{"outside the grant", confined, dir + "/secret", "!denied: fs_read not granted for " + dir + "/secret"},
		{"a symlink out of the grant", confined, dir + "/in/link", "!fs_read not granted for " + dir + "/in/link (resolved to " + dir + "/secret)"},
		{"dot-dot", confined, dir + "/in/../secret", "!not canonical"},
		{"missing", confined, dir + "/in/nope", "!open " + dir + "/in/nope: no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := h.ReadFile(context.Background(), tc.caller, tc.path)
			if want, isErr := strings.CutPrefix(tc.want, "!"); isErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("got %q, %v; want %q", b, err, tc.want)
			}
		})
	}
}
