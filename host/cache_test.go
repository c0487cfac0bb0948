package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// tinyWasm is the smallest module this test needs: one exported function
// returning 0, so a cold compile costs milliseconds (wazero's compiler is
// slow under -race). It is not a ccm plugin; its describe output is empty.
var tinyWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0 has type 0
	0x07, 0x10, 0x01, 0x0c, 'c', 'c', 'm', '_', 'd', 'e', 's', 'c', 'r', 'i', 'b', 'e', 0x00, 0x00, // export
	0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x00, 0x0b, // code: i32.const 0
}

// TestCorruptCache damages every cache entry past its header (a damaged
// header is only "stale" to wazero, which silently recompiles; damaged code
// fails the compile): the module still compiles, the Host says why the cache
// was not used, and the damaged entries are gone so the next run rebuilds.
func TestCorruptCache(t *testing.T) {
	t.Parallel()
	dir, modules, entries := cachedTiny(t)
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 2; i < len(b)-1; i++ {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(e, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	recompiles(t, dir, modules)
	for _, e := range entries {
		if _, err := os.Stat(e); err == nil {
			t.Fatalf("corrupt entry %s was kept", e)
		}
	}
}

func TestUnusableCacheDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	mustWrite(t, file, "", 0o644)
	h, err := New(WithCacheDir(file))
	if err != nil {
		t.Fatalf("an unusable cache dir was fatal: %v", err)
	}
	defer h.Close(context.Background())
	if w := h.CacheWarning(); w == nil || !strings.Contains(w.Error(), "compiling without a persistent cache") {
		t.Fatalf("CacheWarning = %v", w)
	}
}

// TestCacheDirNotPrivate: the compilation cache holds machine code ccm
// runs, so a directory that someone else could write to (group or others
// may write, a link to elsewhere, another user's) is not used: the Host
// compiles without a persistent cache and says why, and writes nothing
// there.
func TestCacheDirNotPrivate(t *testing.T) {
	t.Parallel()
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	private := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"group and others may write": open, "a link": link}
	if os.Geteuid() == 0 {
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		dirs["another user's"] = other
	}
	for name, dir := range dirs {
		h := newProbeHost(t, Limits{}, WithCacheDir(dir), WithModules(map[string][]byte{"tiny": tinyWasm}))
		if w := h.CacheWarning(); w == nil || !strings.Contains(w.Error(), "writable only by its owner") {
			t.Errorf("%s: CacheWarning = %v", name, w)
		}
		_, _ = h.Info(context.Background(), trust.Caller{}, "tiny")
		for _, d := range []string{dir, private} {
			if entries, _ := os.ReadDir(d); len(entries) > 0 {
				t.Errorf("%s: the cache wrote to %s", name, d)
			}
		}
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("CCM_CACHE_DIR", "/srv/cache")
	if got := defaultCacheDir(); got != "/srv/cache" {
		t.Fatalf("with CCM_CACHE_DIR: %q", got)
	}
	t.Setenv("CCM_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/home/u/.xdg")
	want := "/home/u/.xdg/ccm/wazero"
	if os.Geteuid() == 0 {
		want = "/var/cache/ccm"
	}
	if got := defaultCacheDir(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWipeCacheKeepsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "wazero-v1-amd64-linux")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(sub, strings.Repeat("ab", 32))
	tmp := entry + ".123.tmp"
	foreign := filepath.Join(sub, "notes.txt")
	for _, f := range []string{entry, tmp, foreign} {
		mustWrite(t, f, "x", 0o644)
	}
	if err := wipeCache(dir); err != nil {
		t.Fatal(err)
	}
	for f, keep := range map[string]bool{entry: false, tmp: false, foreign: true} {
		if _, err := os.Stat(f); (err == nil) != keep {
			t.Fatalf("%s: kept = %v, want %v", f, err == nil, keep)
		}
	}
}

// TestCachedModuleMapped: a module loaded from the compilation cache runs
// its compiled code mapped from the cache file (third_party/wazero.patch),
// not copied: the entry shows in the process's mappings.
func TestCachedModuleMapped(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("code is mapped from the cache on linux only")
	}
	dir, modules, entries := cachedTiny(t)
	h := newProbeHost(t, Limits{}, WithCacheDir(dir), modules)
	_, _ = h.Info(context.Background(), trust.Caller{}, "tiny")
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		found = found || strings.Contains(string(maps), e)
	}
	if !found {
		t.Fatalf("no cache entry of %v is mapped", entries)
	}
	if w := h.CacheWarning(); w != nil {
		t.Fatalf("CacheWarning = %v", w)
	}
}

// TestCacheHitValidatesOtherBytes: a cache hit skips validating the
// function bodies (third_party/wazero.patch), which is sound only because
// the cache key is a hash of the module's bytes. A module that differs
// from a cached one only in an invalid function body is a miss, validated,
// and refused.
func TestCacheHitValidatesOtherBytes(t *testing.T) {
	t.Parallel()
	dir, _, _ := cachedTiny(t)

	// The body "i32.const 0; end" becomes "i32.add; nop; end", the same
	// size: an add with nothing on the stack.
	bad := slices.Clone(tinyWasm)
	body := bytes.Index(bad, []byte{0x41, 0x00, 0x0b})
	bad[body], bad[body+1] = 0x6a, 0x01
	h := newProbeHost(t, Limits{}, WithCacheDir(dir), WithModules(map[string][]byte{"tiny": bad}))
	_, err := h.Info(context.Background(), trust.Caller{}, "tiny")
	if err == nil || !strings.Contains(err.Error(), "invalid function") {
		t.Fatalf("err = %v, want the invalid function refused", err)
	}
}

// TestTruncatedCacheEntry: an entry shorter than its header says (a copy
// cut short, a full disk) is not mapped, which would fault when executed:
// the module compiles again and the Host says why.
func TestTruncatedCacheEntry(t *testing.T) {
	t.Parallel()
	dir, modules, entries := cachedTiny(t)
	for _, e := range entries {
		st, err := os.Stat(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(e, st.Size()-64); err != nil {
			t.Fatal(err)
		}
	}
	recompiles(t, dir, modules)
}

// cachedTiny fills a new cache directory with tinyWasm's compiled code and
// returns the directory, the option that provides the module, and the
// cache's entries.
func cachedTiny(t *testing.T) (dir string, modules Option, entries []string) {
	t.Helper()
	dir = t.TempDir()
	modules = WithModules(map[string][]byte{"tiny": tinyWasm})
	first := newProbeHost(t, Limits{}, WithCacheDir(dir), modules)
	// Compiles and fills the cache; tiny is no plugin, so describing it fails.
	if _, err := first.Info(context.Background(), trust.Caller{}, "tiny"); err == nil || strings.Contains(err.Error(), "compile") {
		t.Fatalf("first load: err = %v, want a describe error", err)
	}
	entries, _ = filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if len(entries) == 0 {
		t.Fatal("no cache entries")
	}
	return dir, modules, entries
}

// recompiles loads tiny from the damaged cache in dir: the load succeeds
// (describing tiny fails, as it is no plugin) and the Host says it wiped
// the cache's entries.
func recompiles(t *testing.T, dir string, modules Option) {
	t.Helper()
	h := newProbeHost(t, Limits{}, WithCacheDir(dir), modules)
	if _, err := h.Info(context.Background(), trust.Caller{}, "tiny"); err == nil || strings.Contains(err.Error(), "compile") {
		t.Fatalf("a damaged cache was fatal: %v", err)
	}
	if w := h.CacheWarning(); w == nil || !strings.Contains(w.Error(), "wiped its entries") {
		t.Fatalf("CacheWarning = %v", w)
	}
}

// TestCacheOnNoexecFileSystem: where the cache's file system refuses
// executable mappings (mounted noexec), cached code is read instead of
// mapped (third_party/wazero.patch) and loads as before, without a
// warning. It mounts a tmpfs, so it needs root (CI runs as root).
func TestCacheOnNoexecFileSystem(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounts a noexec tmpfs: linux and root only")
	}
	dir := t.TempDir()
	// mode=0700: a fresh tmpfs is 1777, which ccm refuses for a cache.
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOEXEC, "size=16m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	modules := WithModules(map[string][]byte{"tiny": tinyWasm})
	var entries []string
	inodes := map[string]uint64{}
	for run := range 2 { // the first fills the cache, the second reads it
		h := newProbeHost(t, Limits{}, WithCacheDir(dir), modules)
		if _, err := h.Info(context.Background(), trust.Caller{}, "tiny"); err == nil || strings.Contains(err.Error(), "compile") {
			t.Fatalf("run %d: err = %v, want a describe error", run, err)
		}
		if w := h.CacheWarning(); w != nil {
			t.Fatalf("run %d: CacheWarning = %v", run, w)
		}
		entries, _ = filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
		if len(entries) == 0 {
			t.Fatal("no cache entries: the cache was not used")
		}
		// An entry written again (a miss) is a new file under the name.
		for _, e := range entries {
			var st syscall.Stat_t
			if err := syscall.Stat(e, &st); err != nil {
				t.Fatal(err)
			}
			if ino, ok := inodes[e]; ok && ino != st.Ino {
				t.Fatalf("%s was compiled again: the cached code was not read", e)
			}
			inodes[e] = st.Ino
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(string(maps), e) {
			t.Fatalf("%s is mapped from a noexec file system", e)
		}
	}
}
