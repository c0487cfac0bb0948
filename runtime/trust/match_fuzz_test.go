package trust

import (
	"path"
	"strings"
	"testing"
)

// FuzzMatchPathGlob checks the grant matcher on arbitrary bytes against
// what a grant means: a glob without wildcards matches exactly its own path,
// byte for byte, and "P/**" (P without wildcards) matches P and everything
// under it and nothing else. It also checks that DecodeGrant accepts exactly
// the globs the matcher can use. An earlier matcher let a grant of
// "/x/\xaa" match "/x/\x80": doublestar reads both invalid bytes as U+FFFD.
func FuzzMatchPathGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"/x/\xaa", "/x/\x80"},
		{"/x/\ufffd", "/x/\xff"},
		{"/work", "/work/a"},
		{"/work", "/worka"},
		{"/a/b", "/a/b"},
		{"/", "/"},
		{"/é", "/e\u0301"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, lit, target string) {
		if !path.IsAbs(target) || path.Clean(target) != target {
			if matchPath([]string{"/**"}, target) {
				t.Fatalf("unclean target %q matched", target)
			}
			return
		}
		_, err := DecodeGrant(map[string]any{"fs_read": []any{lit}})
		if path.IsAbs(lit) && (err == nil) != validGlob(lit) {
			t.Fatalf("DecodeGrant(%q) = %v, but validGlob = %v", lit, err, validGlob(lit))
		}
		if strings.ContainsAny(lit, `*?[]{}\`) || !path.IsAbs(lit) || path.Clean(lit) != lit {
			return
		}
		want := lit == target && validGlob(lit)
		if got := matchPath([]string{lit}, target); got != want {
			t.Fatalf("glob %q on %q: %v, want %v", lit, target, got, want)
		}
		tree := lit + "/**"
		if lit == "/" {
			tree = "/**"
		}
		under := target == lit || strings.HasPrefix(target, strings.TrimSuffix(lit, "/")+"/")
		if got := matchPath([]string{tree}, target); got != (under && validGlob(lit)) {
			t.Fatalf("glob %q on %q: %v, want %v", tree, target, got, under)
		}
	})
}
