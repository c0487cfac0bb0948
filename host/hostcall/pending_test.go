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
	// Filled unnamed, a pending write has no name in the directory at all
	// (killed now, nothing would be left); named, its temp files are there.
	want := []string{".a.ccm-tmp", ".b.ccm-tmp", "a"}
	if !named {
		want = []string{"a"}
		if !procOK {
			t.Fatal("/proc/self/fd does not lead to this process's descriptors: no unnamed writes here")
		}
	}
	if got := entries(t, dir); !slices.Equal(got, want) {
		t.Fatalf("while pending: %v, want %v", got, want)
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

// TestPendingWriteFails: a write whose completion fails (its rename or
// link, or a temp file another writer replaced) leaves the target as it
// was, removes only its own temp file and fails Settle naming the target.
func TestPendingWriteFails(t *testing.T) {
	for _, tc := range []struct {
		how   string
		named bool
	}{{"rename fails", true}, {"temp file replaced", true}, {"link fails", false}} {
		t.Run(tc.how, func(t *testing.T) {
			dir := tempDir(t)
			st := pendingState(t, dir, tc.named)
			a, other := filepath.Join(dir, "a"), filepath.Join(dir, "other")
			mustWrite(t, a, "old\n", 0o644)
			for _, p := range []string{a, other} {
				if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: p, Content: []byte("new\n"), Mode: 0o644}); cerr != nil {
					t.Fatal(cerr)
				}
			}
			tmp := filepath.Join(dir, tempName("a"))
			switch tc.how {
			case "rename fails", "link fails":
				completeHook = func(name string) error {
					if name == "a" {
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
			if tc.how != "temp file replaced" && terr == nil {
				t.Fatal("the failed write's temp file was left")
			}
			if tc.how == "temp file replaced" {
				if got, _ := os.ReadFile(tmp); string(got) != "half-writ" {
					t.Fatalf("the other writer's temp file was touched: %q %v", got, terr)
				}
			}
		})
	}
}

// TestPendingUnnamedPlace: an unnamed pending write is linked to a free
// name, which never replaces anything; a target that exists, or that
// appeared after the call, is replaced by a rename from the temp name
// (whatever was planted at that name is removed, not written through);
// owner and mode are exactly those asked whatever the umask.
func TestPendingUnnamedPlace(t *testing.T) {
	t.Parallel()
	dir, out := tempDir(t), outsideTree(t)
	before := fstree.Describe(t, out)
	st := pendingState(t, dir, false)
	write := func(name, content string, mode uint32) {
		t.Helper()
		if _, cerr := hcall(t, st, abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, name), Content: []byte(content), Mode: mode}); cerr != nil {
			t.Fatal(cerr)
		}
	}
	mustWrite(t, filepath.Join(dir, "exists"), "old\n", 0o644)
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	write("new", "new\n", 0o640)
	write("exists", "replaced\n", 0o600)
	write("link", "not through\n", 0o644)
	write("appears", "ours\n", 0o777) // the umask clears some: chmod after the create
	write("planted", "planted\n", 0o644)
	// Meanwhile another writer creates "appears", and plants a hard link to
	// an outside file at the temp name of "planted", then creates it.
	mustWrite(t, filepath.Join(dir, "appears"), "theirs\n", 0o644)
	if err := os.Link(filepath.Join(out, "secret"), filepath.Join(dir, tempName("planted"))); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "planted"), "theirs\n", 0o644)
	if err := st.Pending.Settle(st); err != nil {
		t.Fatal(err)
	}
	st.Dirs.SyncAll()
	for name, want := range map[string]struct {
		content string
		mode    os.FileMode
	}{
		"new": {"new\n", 0o640}, "exists": {"replaced\n", 0o600}, "link": {"not through\n", 0o644},
		"appears": {"ours\n", 0o777}, "planted": {"planted\n", 0o644},
	} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != want.content || fi.Mode() != want.mode {
			t.Errorf("%s: %q %v, want %q %v", name, b, fi.Mode(), want.content, want.mode)
		}
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"appears", "exists", "link", "new", "planted"}) {
		t.Fatalf("entries: %v", got)
	}
	if after := fstree.Describe(t, out); after != before {
		t.Fatalf("outside changed:\n%s\n%s", before, after)
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
