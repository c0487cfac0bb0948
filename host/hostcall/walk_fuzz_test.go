package hostcall

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzResolve walks arbitrary paths through a tree full of symlinks
// (relative, absolute, escaping, looping, dangling, through files) and checks
// the walk's one promise: the descriptor it yields is exactly the directory
// whose path it returns, which is what grants are matched on. So a path
// resolved under the tree is a descriptor under it, and one that leaves
// the tree is reported outside it, never the other way round. The openat2
// and per-component walks must agree, and agree with filepath.EvalSymlinks.
func FuzzResolve(f *testing.F) {
	root := tempDir(f)
	outside := tempDir(f)
	for _, d := range []string{"a/b/c", "x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	mustWrite(f, filepath.Join(root, "file"), "f", 0o644)
	for link, target := range map[string]string{
		"rel":         "a/b",
		"up":          "..",
		"a/b/upup":    "../..",
		"escape":      "../../../../..",
		"abs":         filepath.Join(root, "a"),
		"out":         outside,
		"etc":         "/etc",
		"loop":        "loop",
		"ping":        "pong",
		"pong":        "ping",
		"dangling":    "nowhere/x",
		"tofile":      "file",
		"a/b/c/chain": "../../../rel/c",
		"proc":        "/proc/self/cwd",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	for _, seed := range []string{"a/b/c", "rel/c", "up/x", "a/b/upup/x", "escape/etc", "abs/b", "out", "etc",
		"loop/x", "ping", "dangling", "tofile/x", "a/b/c/chain/chain", "proc", "missing/deeper", "rel/missing/x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.IndexByte(rel, 0) >= 0 || len(rel) > 512 {
			return
		}
		dir := filepath.Clean(root + "/" + rel)
		fast, fastPath, fastMissing, fastErr := walkDir(dir)
		slow, slowPath, slowMissing, slowErr := walkComponents(dir)
		for _, fd := range []int{fast, slow} {
			if fd >= 0 {
				defer unix.Close(fd)
			}
		}
		if (fastErr == nil) != (slowErr == nil) || fastPath != slowPath || !slices.Equal(fastMissing, slowMissing) {
			t.Fatalf("%q: openat2 walk (%q %q %v) and per-component walk (%q %q %v) disagree", dir, fastPath, fastMissing, fastErr, slowPath, slowMissing, slowErr)
		}
		if slowErr != nil {
			return
		}
		for _, fd := range []int{fast, slow} {
			at, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			if err != nil {
				t.Fatal(err)
			}
			if at != slowPath {
				t.Fatalf("%q: the descriptor is at %q, the walk says %q", dir, at, slowPath)
			}
		}
		if slowMissing == nil {
			if want, err := filepath.EvalSymlinks(dir); err == nil && want != slowPath {
				t.Fatalf("%q: walk %q, EvalSymlinks %q", dir, slowPath, want)
			}
		}
	})
}

// BenchmarkLocate is the walk every filesystem host call makes to its
// target's directory: openat2 in one call for a path without symlinks, one
// openat per component when a symlink is on the way (or openat2 is missing).
func BenchmarkLocate(b *testing.B) {
	root := tempDir(b)
	deep := filepath.Join(root, "a", "b", "c", "d")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("a/b", filepath.Join(root, "link")); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name, path   string
		perComponent bool
	}{
		{"no symlink", filepath.Join(deep, "f"), false},
		{"no symlink, per component", filepath.Join(deep, "f"), true},
		{"through a symlink", filepath.Join(root, "link", "c", "d", "f"), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			was := noOpenat2.Load()
			noOpenat2.Store(bc.perComponent)
			defer noOpenat2.Store(was)
			for b.Loop() {
				l, cerr := locate(bc.path)
				if cerr != nil {
					b.Fatal(cerr)
				}
				l.close()
			}
		})
	}
}
