package hostcall

// Containment of the filesystem host calls (docs/security.md,
// "Filesystem"): races on paths, hard links, privilege bits, non-regular
// files and the temp files of interrupted writes. The calls are made
// directly, as the dispatcher makes them after decoding a request, so a
// race loop makes thousands of them in a second.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// directState is the state of an apply call for caller.
func directState(caller trust.Caller) *State {
	caller.Mode = trust.ModeApply
	return &State{Export: abi.ExportApply, Caller: caller, HostCalls: true, RequestBytes: 16 << 20, ExecOutputBytes: 1 << 20, Names: &NameCache{}}
}

// outsideTree lays out a sentinel directory outside every grant.
func outsideTree(t testing.TB) string {
	t.Helper()
	out := tempDir(t)
	mustWrite(t, filepath.Join(out, "secret"), "SECRET outside the grant\n", 0o600)
	mustWrite(t, filepath.Join(out, "victim"), "victim outside the grant\n", 0o640)
	if err := os.Mkdir(filepath.Join(out, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(out, "sub", "notes"), "keep\n", 0o644)
	return out
}

// TestFSRaceSwapDirForSymlink swaps a granted directory for a symlink to a
// directory outside the grant, atomically (renameat2 RENAME_EXCHANGE) and
// as fast as it can, while every filesystem host call goes for a file in
// it. Each call either acts inside the grant or is refused; nothing outside
// changes and no outside content is read. With the old check-then-open by
// name, writes landed outside within a few hundred calls.
func TestFSRaceSwapDirForSymlink(t *testing.T) {
	for _, walk := range []string{"openat2", "per-component"} {
		t.Run(walk, func(t *testing.T) {
			if walk == "per-component" {
				was := noOpenat2.Load()
				noOpenat2.Store(true)
				t.Cleanup(func() { noOpenat2.Store(was) })
			}
			raceSwap(t)
		})
	}
}

func raceSwap(t *testing.T) {
	work, out := tempDir(t), outsideTree(t)
	before := fstree.Describe(t, out)
	swap, alt := filepath.Join(work, "swap"), filepath.Join(work, "alt")
	if err := os.Mkdir(swap, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(swap, "victim"), "inside\n", 0o644)
	if err := os.Symlink(out, alt); err != nil {
		t.Fatal(err)
	}
	st := directState(trust.Caller{Grants: grantDir(t, work)})
	ctx := context.Background()

	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, swap, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	}()

	for swaps.Load() < 10 { // the racer is running before the first call
		time.Sleep(time.Millisecond)
	}
	p := func(name string) string { return filepath.Join(swap, name) }
	var ok, refused int
	deadline := time.Now().Add(time.Second)
	for i := 0; i < 3000 && time.Now().Before(deadline); i++ {
		var cerr *abi.CallError
		var resp any
		switch i % 8 {
		case 0:
			_, cerr = fsWrite(ctx, st, abi.FSWriteRequest{Path: p("pwned"), Content: []byte("pwned\n"), Mode: 0o666})
		case 1:
			_, cerr = fsChmod(ctx, st, abi.FSChmodRequest{Path: p("victim"), Mode: 0o777})
		case 2:
			_, cerr = fsChown(ctx, st, abi.FSChownRequest{Path: p("victim"), Owner: "4242", Group: "4242"})
		case 3:
			resp, cerr = FSRead(ctx, st, abi.FSReadRequest{Path: p("secret")})
		case 4:
			_, cerr = fsMkdir(ctx, st, abi.FSMkdirRequest{Path: p("newdir"), Mode: 0o777, Parents: true})
		case 5:
			_, cerr = fsRemove(ctx, st, abi.FSRemoveRequest{Path: p("sub"), Recursive: true})
		case 6:
			resp, cerr = fsStat(ctx, st, abi.FSStatRequest{Path: p("secret"), Checksum: true})
		case 7:
			_, cerr = fsRemove(ctx, st, abi.FSRemoveRequest{Path: p("victim")})
		}
		if r, isRead := resp.(abi.FSReadResponse); isRead && strings.Contains(string(r.Content), "SECRET") {
			t.Fatalf("call %d read the outside secret through the swapped directory", i)
		}
		if r, isStat := resp.(abi.FSStatResponse); isStat && r.Exists {
			t.Fatalf("call %d stat the outside secret through the swapped directory", i)
		}
		if cerr == nil {
			ok++
		} else {
			refused++
		}
	}
	stop.Store(true)
	wg.Wait()
	st.Dirs.SyncAll()
	t.Logf("%d calls acted inside the grant, %d refused or failed; %d swaps", ok, refused, swaps.Load())
	if after := fstree.Describe(t, out); after != before {
		t.Fatalf("the tree outside the grant changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestFSHardLink plants, inside the grant, a hard link to a file outside
// it. In a confined scope the host refuses to read, hash, copy, chmod or
// chown it; replacing or removing the name stays allowed and leaves the
// outside file alone. Unconfined, it is an ordinary file.
func TestFSHardLink(t *testing.T) {
	work, out := tempDir(t), outsideTree(t)
	secret := filepath.Join(out, "secret")
	hl := filepath.Join(work, "hl")
	if err := os.Link(secret, hl); err != nil {
		t.Skipf("hard link across temp dirs: %v", err)
	}
	before := fstree.Describe(t, out)
	ctx := context.Background()
	st := directState(trust.Caller{Grants: grantDir(t, work)})
	refusals := []struct {
		name string
		call func() *abi.CallError
		want string
	}{
		{"read", func() *abi.CallError {
			_, c := FSRead(ctx, st, abi.FSReadRequest{Path: hl})
			return c
		}, "read refused for " + hl + ": it has 2 hard links"},
		{"checksum", func() *abi.CallError {
			_, c := fsStat(ctx, st, abi.FSStatRequest{Path: hl, Checksum: true})
			return c
		}, "checksum refused"},
		{"source", func() *abi.CallError {
			_, c := fsWrite(ctx, st, abi.FSWriteRequest{Path: filepath.Join(work, "copy"), Source: hl, Mode: 0o644})
			return c
		}, "open source refused"},
		{"chmod", func() *abi.CallError {
			_, c := fsChmod(ctx, st, abi.FSChmodRequest{Path: hl, Mode: 0o666})
			return c
		}, "chmod refused"},
		{"chown", func() *abi.CallError {
			_, c := fsChown(ctx, st, abi.FSChownRequest{Path: hl, Owner: "4242"})
			return c
		}, "chown refused"},
	}
	for _, r := range refusals {
		cerr := r.call()
		if cerr == nil || cerr.Code != abi.CodeDenied || !strings.Contains(cerr.Message, r.want) {
			t.Errorf("%s of a hard link to an outside file: %v, want denied %q", r.name, cerr, r.want)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "copy")); err == nil {
		t.Errorf("the copy from a hard-linked source was written")
	}
	// A plain stat (no content) is allowed: metadata only.
	if resp, cerr := fsStat(ctx, st, abi.FSStatRequest{Path: hl}); cerr != nil || !resp.(abi.FSStatResponse).Exists {
		t.Errorf("stat: %v %v", resp, cerr)
	}
	if after := fstree.Describe(t, out); after != before {
		t.Fatalf("the outside file changed:\n%s\n%s", before, after)
	}
	// Replacing the name renames a new file over it: the outside file keeps
	// its content, and the link is gone.
	if _, cerr := fsWrite(ctx, st, abi.FSWriteRequest{Path: hl, Content: []byte("mine\n"), Mode: 0o644}); cerr != nil {
		t.Fatalf("replace: %v", cerr)
	}
	if b, _ := os.ReadFile(secret); !strings.Contains(string(b), "SECRET") {
		t.Fatalf("the outside file was written through the link: %q", b)
	}
	if err := os.Link(secret, filepath.Join(work, "hl2")); err != nil {
		t.Fatal(err)
	}
	if _, cerr := fsRemove(ctx, st, abi.FSRemoveRequest{Path: filepath.Join(work, "hl2")}); cerr != nil {
		t.Fatalf("remove: %v", cerr)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatal(err)
	}
	// Not only regular files: a second link to an outside FIFO (or device
	// node) is not chmod-ed or chown-ed either.
	if err := unix.Mkfifo(filepath.Join(out, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "pipe"), filepath.Join(work, "pipe")); err != nil {
		t.Fatal(err)
	}
	if _, cerr := fsChmod(ctx, st, abi.FSChmodRequest{Path: filepath.Join(work, "pipe"), Mode: 0o666}); cerr == nil || !strings.Contains(cerr.Message, "it has 2 hard links") {
		t.Errorf("chmod of a hard link to an outside FIFO: %v", cerr)
	}
	if fi, _ := os.Stat(filepath.Join(out, "pipe")); fi.Mode().Perm() != 0o600 {
		t.Errorf("the outside FIFO was chmod-ed: %v", fi.Mode())
	}
	// Unconfined (no grants; or a grant of /**): an ordinary file.
	for _, chain := range []trust.Chain{nil, {trust.All()}} {
		if err := os.Link(secret, filepath.Join(work, "hl3")); err != nil {
			t.Fatal(err)
		}
		resp, cerr := FSRead(ctx, directState(trust.Caller{Grants: chain}), abi.FSReadRequest{Path: filepath.Join(work, "hl3")})
		if cerr != nil || !strings.Contains(string(resp.(abi.FSReadResponse).Content), "SECRET") {
			t.Errorf("unconfined read of a hard-linked file: %v", cerr)
		}
		_ = os.Remove(filepath.Join(work, "hl3"))
	}
}

// TestFSSetid: a setuid or setgid bit needs setid: true in every grant of
// the chain, for a write, a chmod and a mkdir; the sticky bit does not.
func TestFSSetid(t *testing.T) {
	work := tempDir(t)
	ctx := context.Background()
	mustWrite(t, filepath.Join(work, "f"), "x", 0o755)
	calls := func(st *State, i int) []*abi.CallError {
		_, w := fsWrite(ctx, st, abi.FSWriteRequest{Path: filepath.Join(work, fmt.Sprintf("w%d", i)), Content: []byte("#!/bin/sh\n"), Mode: 0o4755})
		_, c := fsChmod(ctx, st, abi.FSChmodRequest{Path: filepath.Join(work, "f"), Mode: 0o2755})
		_, m := fsMkdir(ctx, st, abi.FSMkdirRequest{Path: filepath.Join(work, fmt.Sprintf("d%d", i)), Mode: 0o2775})
		return []*abi.CallError{w, c, m}
	}
	no := grantDir(t, work)
	yes := grantDir(t, work)
	yes[0].Setid = true
	for i, tc := range []struct {
		name    string
		chain   trust.Chain
		allowed bool
	}{
		{"grant without setid", no, false},
		{"grant with setid", yes, true},
		{"chain where one grant lacks it", trust.Chain{yes[0], no[0]}, false},
		{"unconfined root", nil, true},
	} {
		for j, cerr := range calls(directState(trust.Caller{Grants: tc.chain}), i) {
			switch {
			case tc.allowed && cerr != nil:
				t.Errorf("%s: call %d: %v", tc.name, j, cerr)
			case !tc.allowed && (cerr == nil || cerr.Code != abi.CodeDenied || !strings.Contains(cerr.Message, "add setid: true to grants")):
				t.Errorf("%s: call %d: %v, want denied", tc.name, j, cerr)
			}
		}
		fi, err := os.Stat(filepath.Join(work, fmt.Sprintf("w%d", i)))
		if tc.allowed && (err != nil || fi.Mode()&os.ModeSetuid == 0) {
			t.Errorf("%s: the setuid file was not written: %v", tc.name, err)
		}
		if !tc.allowed && err == nil {
			t.Errorf("%s: a refused setuid write left a file (mode %v)", tc.name, fi.Mode())
		}
		if tc.allowed {
			if err := os.Chmod(filepath.Join(work, "f"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if fi, _ := os.Stat(filepath.Join(work, "f")); fi.Mode()&os.ModeSetgid != 0 {
			t.Errorf("%s: the refused chmod set setgid", tc.name)
		}
	}
	if _, cerr := fsMkdir(ctx, directState(trust.Caller{Grants: no}), abi.FSMkdirRequest{Path: filepath.Join(work, "tmp"), Mode: 0o1777}); cerr != nil {
		t.Errorf("sticky mkdir: %v", cerr)
	}
}

// TestFSNonRegular: content is read only from regular files. A FIFO (which
// would block an open for reading until a writer comes) is refused at once,
// as a source too; a stat with a checksum of it has no checksum.
func TestFSNonRegular(t *testing.T) {
	work := tempDir(t)
	fifo := filepath.Join(work, "fifo")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := directState(trust.Caller{Grants: grantDir(t, work)})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, c := FSRead(ctx, st, abi.FSReadRequest{Path: fifo})
		if c == nil || !strings.Contains(c.Message, "not a regular file (other)") {
			t.Errorf("read of a FIFO: %v", c)
		}
		_, c = fsWrite(ctx, st, abi.FSWriteRequest{Path: filepath.Join(work, "copy"), Source: fifo, Mode: 0o644})
		if c == nil || !strings.Contains(c.Message, "not a regular file (other)") {
			t.Errorf("FIFO as a source: %v", c)
		}
		r, c := fsStat(ctx, st, abi.FSStatRequest{Path: fifo, Checksum: true})
		if c != nil || r.(abi.FSStatResponse).Type != "other" || r.(abi.FSStatResponse).SHA256 != "" {
			t.Errorf("stat of a FIFO: %+v %v", r, c)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a host call on a FIFO hangs")
	}
}

// TestFSWriteTempFiles: the temp file of a write is named after its target,
// so the next write of that target removes what an interrupted write left
// (whatever it is: a half-written file, or a hard link or symlink planted
// there to an outside file, never written through); a write that fails
// before its rename leaves the target as it was and no temp file.
func TestFSWriteTempFiles(t *testing.T) {
	work, out := tempDir(t), outsideTree(t)
	before := fstree.Describe(t, out)
	ctx := context.Background()
	st := directState(trust.Caller{Grants: grantDir(t, work)})
	target := filepath.Join(work, "f")
	tmp := filepath.Join(work, ".f.ccm-tmp")
	plant := map[string]func() error{
		"half-written": func() error { return os.WriteFile(tmp, []byte("half"), 0o600) },
		"hard link":    func() error { return os.Link(filepath.Join(out, "victim"), tmp) },
		"symlink":      func() error { return os.Symlink(filepath.Join(out, "victim"), tmp) },
		"directory":    func() error { return os.Mkdir(tmp, 0o700) },
	}
	for name, p := range plant {
		if err := p(); err != nil {
			t.Fatal(err)
		}
		_, cerr := fsWrite(ctx, st, abi.FSWriteRequest{Path: target, Content: []byte(name), Mode: 0o644})
		if name == "directory" {
			// Not something a write leaves: refused, not removed.
			if cerr == nil || !strings.Contains(cerr.Message, "remove stale temp file .f.ccm-tmp") {
				t.Errorf("%s: %v", name, cerr)
			}
			_ = os.Remove(tmp)
			continue
		}
		if cerr != nil {
			t.Fatalf("%s: %v", name, cerr)
		}
		if b, _ := os.ReadFile(target); string(b) != name {
			t.Errorf("%s: target %q", name, b)
		}
		if _, err := os.Lstat(tmp); err == nil {
			t.Errorf("%s: the stale temp file is still there", name)
		}
	}
	// An interrupted write: the hook fails after the temp file is full.
	writeHook = func(string) error { return fmt.Errorf("interrupted") }
	_, cerr := fsWrite(ctx, st, abi.FSWriteRequest{Path: target, Content: []byte("new content"), Mode: 0o644})
	writeHook = nil
	if cerr == nil || !strings.Contains(cerr.Message, "interrupted") {
		t.Fatalf("interrupted write: %v", cerr)
	}
	if b, _ := os.ReadFile(target); string(b) == "new content" {
		t.Fatalf("the interrupted write replaced the target")
	}
	if _, err := os.Lstat(tmp); err == nil {
		t.Fatal("the failed write left its temp file")
	}
	st.Dirs.SyncAll()
	if after := fstree.Describe(t, out); after != before {
		t.Fatalf("outside changed:\n%s\n%s", before, after)
	}
	if n := tempName(strings.Repeat("x", 250)); len(n) > 255 || !strings.HasPrefix(n, ".ccm-tmp-") {
		t.Fatalf("temp name of a long name: %q", n)
	}
}
