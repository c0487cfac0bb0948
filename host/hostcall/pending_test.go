package hostcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// pendingState is an apply call's state with writes put off, as the plugin
// runtime makes it; named fills every write under its temp name, as on a
// filesystem without O_TMPFILE.
func pendingState(t *testing.T, dir string, named bool) *State {
	t.Helper()
	caller := trust.Caller{Grants: grantDir(t, dir)}
	st := directState(caller)
	st.Caps = &abi.Capabilities{FSRead: []string{"/**"}, FSWrite: []string{"/**"}}
	st.Dirs, st.Pending = &DirSyncs{}, &Pending{named: named}
	t.Cleanup(func() { _ = st.Pending.Settle(st); st.Dirs.SyncAll() })
	return st
}

func hcall(t *testing.T, st *State, call string, req any) (any, *abi.CallError) {
	t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return Handlers()[call](context.Background(), st, raw)
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// fillModes are the two ways a pending write is filled: unnamed
// (O_TMPFILE, where the filesystem has it: the test's does, or the test
// fails) and under its temp name (the fallback, forced).
var fillModes = []struct {
	name  string
	named bool
}{{"unnamed", false}, {"named", true}}

// TestPendingWritesOrdered: a write returns with its fsync and rename
// pending; a stat of the target answers what the rename will put there;
// a second write of the target, and any read, list, remove, ... complete
// the pending writes first; Settle completes the rest.
func TestPendingWritesOrdered(t *testing.T) {
	t.Parallel()
	for _, m := range fillModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			testPendingWritesOrdered(t, m.named)
		})
	}
}

func testPendingWritesOrdered(t *testing.T, named bool) {
	dir := tempDir(t)
	st := pendingState(t, dir, named)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustWrite(t, a, "old a\n", 0o600)
	write := func(path, content string) {
		t.Helper()
		if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: path, Content: []byte(content), Mode: 0o640}); cerr != nil {
			t.Fatal(cerr)
		}
	}
	write(a, "new a\n")
	write(b, "b\n")
	if got, _ := os.ReadFile(a); string(got) != "old a\n" {
		t.Fatalf("a pending write is in place before its fsync completed: %q", got)
	}
	// Filled either way, a pending write's complete file is under its temp
	// name until the rename.
	if got, want := entries(t, dir), []string{".a.ccm-tmp", ".b.ccm-tmp", "a"}; !slices.Equal(got, want) {
		t.Fatalf("while pending: %v, want %v", got, want)
	}
	for _, w := range st.Pending.writes {
		if w.anon == named {
			t.Fatalf("%s: filled unnamed %v, want %v (O_TMPFILE on the test's filesystem, /proc/self/fd: %v)", w.path, w.anon, !named, procOK)
		}
	}
	resp, cerr := hcall(t, st, abi.CallFSStat, abi.FSStatRequest{Path: a, Checksum: true})
	if cerr != nil {
		t.Fatal(cerr)
	}
	sr := resp.(abi.FSStatResponse)
	if !sr.Exists || sr.Type != "file" || sr.Mode != 0o640 || sr.Size != 6 || sr.SHA256 != sha256Hex([]byte("new a\n")) {
		t.Fatalf("stat of a pending target: %+v", sr)
	}
	// The same target through a symlinked directory is the same pending write.
	if err := os.Symlink(dir, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	resp, cerr = hcall(t, st, abi.CallFSStat, abi.FSStatRequest{Path: filepath.Join(dir, "alias", "a"), Checksum: true})
	if cerr != nil {
		t.Fatal(cerr)
	}
	if sr := resp.(abi.FSStatResponse); sr.SHA256 != sha256Hex([]byte("new a\n")) {
		t.Fatalf("stat of a pending target through a symlinked directory: %+v", sr)
	}
	write(a, "newer a\n") // completes the first write of a, then pends
	if got, _ := os.ReadFile(a); string(got) != "new a\n" {
		t.Fatalf("a second write did not complete the first: a is %q", got)
	}
	resp, cerr = hcall(t, st, abi.CallFSRead, abi.FSReadRequest{Path: b})
	if cerr != nil {
		t.Fatal(cerr)
	}
	if got := string(resp.(abi.FSReadResponse).Content); got != "b\n" {
		t.Fatalf("read after a pending write: %q", got)
	}
	if got, _ := os.ReadFile(a); string(got) != "newer a\n" {
		t.Fatalf("a read did not complete every pending write: a is %q", got)
	}
	write(b, "b2\n")
	resp, cerr = hcall(t, st, abi.CallFSList, abi.FSListRequest{Path: dir})
	if cerr != nil {
		t.Fatal(cerr)
	}
	var listed []string
	for _, e := range resp.(abi.FSListResponse).Entries {
		listed = append(listed, e.Name)
	}
	if !slices.Equal(listed, []string{"a", "alias", "b"}) {
		t.Fatalf("list after a pending write: %v (a temp file still there?)", listed)
	}
	write(b, "b3\n")
	if err := st.Pending.Settle(st); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(b); string(got) != "b3\n" {
		t.Fatalf("Settle did not complete the pending write: b is %q", got)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"a", "alias", "b"}) {
		t.Fatalf("after Settle: %v", got)
	}
}

// TestPendingWriteFails: a write whose completion fails (its rename, or a
// temp file another writer replaced) leaves the target as it was, removes
// only its own temp file and fails Settle naming the target; filled
// unnamed or not.
func TestPendingWriteFails(t *testing.T) {
	for _, m := range fillModes {
		for _, how := range []string{"rename fails", "temp file replaced"} {
			t.Run(m.name+"/"+how, func(t *testing.T) {
				testPendingWriteFails(t, m.named, how)
			})
		}
	}
}

func testPendingWriteFails(t *testing.T, named bool, how string) {
	dir := tempDir(t)
	st := pendingState(t, dir, named)
	a, other := filepath.Join(dir, "a"), filepath.Join(dir, "other")
	mustWrite(t, a, "old\n", 0o644)
	for _, p := range []string{a, other} {
		if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: p, Content: []byte("new\n"), Mode: 0o644}); cerr != nil {
			t.Fatal(cerr)
		}
	}
	tmp := filepath.Join(dir, tempName("a"))
	switch how {
	case "rename fails":
		completeHook = func(name string) error {
			if name == tempName("a") {
				return errors.New("injected")
			}
			return nil
		}
		t.Cleanup(func() { completeHook = func(string) error { return nil } })
	case "temp file replaced":
		if err := os.Remove(tmp); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, tmp, "half-writ", 0o600)
	}
	err := st.Pending.Settle(st)
	if err == nil || !strings.Contains(err.Error(), "write "+a+": ") {
		t.Fatalf("Settle: %v, want the failure of %s", err, a)
	}
	if got, _ := os.ReadFile(a); string(got) != "old\n" {
		t.Fatalf("the target changed: %q", got)
	}
	if got, _ := os.ReadFile(other); string(got) != "new\n" {
		t.Fatalf("the other write was not completed: %q", got)
	}
	_, terr := os.Lstat(tmp)
	if how == "rename fails" && terr == nil {
		t.Fatal("the failed write's temp file was left")
	}
	if how == "temp file replaced" {
		if got, _ := os.ReadFile(tmp); string(got) != "half-writ" {
			t.Fatalf("the other writer's temp file was touched: %q %v", got, terr)
		}
	}
}

// TestPendingTempNameTaken: whatever is at a pending write's temp name
// (an interrupted write's file, a hard link or a symlink to an outside
// file, planted there) is removed, never written through, and the target
// (a symlink to outside included) is replaced, filled unnamed or not;
// owner and mode are exactly those asked whatever the umask.
func TestPendingTempNameTaken(t *testing.T) {
	t.Parallel()
	for _, m := range fillModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir, out := tempDir(t), outsideTree(t)
			before := fstree.Describe(t, out)
			st := pendingState(t, dir, m.named)
			secret := filepath.Join(out, "secret")
			mustWrite(t, filepath.Join(dir, tempName("stale")), "half", 0o600)
			if err := os.Link(secret, filepath.Join(dir, tempName("hard"))); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, filepath.Join(dir, tempName("sym"))); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			want := map[string]os.FileMode{"stale": 0o640, "hard": 0o644, "sym": 0o600, "link": 0o644, "wide": 0o777}
			for name, mode := range want {
				if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, name), Content: []byte(name), Mode: uint32(mode)}); cerr != nil {
					t.Fatal(cerr)
				}
			}
			if err := st.Pending.Settle(st); err != nil {
				t.Fatal(err)
			}
			st.Dirs.SyncAll()
			for name, mode := range want {
				p := filepath.Join(dir, name)
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(p); string(b) != name || fi.Mode() != mode {
					t.Errorf("%s: %q %v, want %q %v", name, b, fi.Mode(), name, mode)
				}
			}
			if got := entries(t, dir); !slices.Equal(got, []string{"hard", "link", "stale", "sym", "wide"}) {
				t.Fatalf("entries: %v", got)
			}
			if after := fstree.Describe(t, out); after != before {
				t.Fatalf("outside changed:\n%s\n%s", before, after)
			}
		})
	}
}

// TestPendingBound: past maxPendingWrites the oldest pending write is
// completed before the next one is added.
func TestPendingBound(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	st := pendingState(t, dir, false)
	for i := range maxPendingWrites + 5 {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: p, Content: []byte("x"), Mode: 0o644}); cerr != nil {
			t.Fatal(cerr)
		}
	}
	if n := len(st.Pending.writes); n != maxPendingWrites {
		t.Fatalf("%d writes pending, want %d", n, maxPendingWrites)
	}
	for i := range 5 {
		if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d", i))); err != nil || string(b) != "x" {
			t.Fatalf("f%d, one of the oldest, is not complete: %q %v", i, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f5")); err == nil {
		t.Fatal("f5 was completed before the bound asked for it")
	}
	if err := st.Pending.Settle(st); err != nil {
		t.Fatal(err)
	}
	if n := len(entries(t, dir)); n != maxPendingWrites+5 {
		t.Fatalf("%d files, want %d", n, maxPendingWrites+5)
	}
}

// TestLinkFd: an unnamed file is linked under a name with AT_EMPTY_PATH
// (as root) and, where that is refused, through /proc/self/fd; a name
// already there is never replaced by either.
func TestLinkFd(t *testing.T) {
	dir := tempDir(t)
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	mustWrite(t, filepath.Join(dir, "taken"), "theirs", 0o644)
	was := noEmptyPathLink.Load()
	t.Cleanup(func() { noEmptyPathLink.Store(was) })
	for _, proc := range []bool{false, true} {
		noEmptyPathLink.Store(proc)
		fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeAll(fd, []byte("ours")); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("proc-%v", proc)
		if err := linkFd(fd, dfd, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := linkFd(fd, dfd, "taken"); err != unix.EEXIST {
			t.Fatalf("%s: link over a taken name: %v, want EEXIST", name, err)
		}
		_ = unix.Close(fd)
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "ours" {
			t.Fatalf("%s: %q", name, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "taken")); string(b) != "theirs" {
		t.Fatalf("a taken name was replaced: %q", b)
	}
}
