package host

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func mustWrite(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestFSStat(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	file := filepath.Join(dir, "f")
	mustWrite(t, file, "hello", 0o640)
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("hello"))
	caller := trust.Caller{Grants: grantDir(t, dir)}

	tests := []struct {
		name string
		req  abi.FSStatRequest
		want abi.FSStatResponse
	}{
		{name: "file with checksum", req: abi.FSStatRequest{Path: file, Checksum: true},
			want: abi.FSStatResponse{Exists: true, Type: "file", Mode: 0o640, Owner: "root", Group: "root", Size: 5, SHA256: hex.EncodeToString(sum[:])}},
		{name: "directory", req: abi.FSStatRequest{Path: dir},
			want: abi.FSStatResponse{Exists: true, Type: "directory", Mode: 0o750, Owner: "root", Group: "root"}},
		{name: "symlink not followed", req: abi.FSStatRequest{Path: filepath.Join(dir, "link")},
			want: abi.FSStatResponse{Exists: true, Type: "symlink", Mode: 0o777, Owner: "root", Group: "root", LinkTarget: "f"}},
		{name: "symlink followed", req: abi.FSStatRequest{Path: filepath.Join(dir, "link"), FollowSymlinks: true},
			want: abi.FSStatResponse{Exists: true, Type: "file", Mode: 0o640, Owner: "root", Group: "root", Size: 5}},
		{name: "missing", req: abi.FSStatRequest{Path: filepath.Join(dir, "nope")}, want: abi.FSStatResponse{}},
		{name: "missing parent", req: abi.FSStatRequest{Path: filepath.Join(dir, "nope", "x")}, want: abi.FSStatResponse{}},
		{name: "parent is a file", req: abi.FSStatRequest{Path: filepath.Join(file, "x")}, want: abi.FSStatResponse{}},
		{name: "dangling followed", req: abi.FSStatRequest{Path: filepath.Join(dir, "dangling"), FollowSymlinks: true}, want: abi.FSStatResponse{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got abi.FSStatResponse
			okInto(t, apply(t, h, caller, hc{abi.CallFSStat, tt.req})[0], &got)
			got.MTime, got.UID, got.GID = 0, 0, 0
			if tt.want.Type == "directory" || tt.want.Type == "symlink" {
				got.Size = 0
			}
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFSRead(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	file := filepath.Join(dir, "f")
	mustWrite(t, file, "0123456789", 0o600)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	caller := trust.Caller{Grants: grantDir(t, dir)}
	r := apply(t, h, caller,
		hc{abi.CallFSRead, abi.FSReadRequest{Path: file}},
		hc{abi.CallFSRead, abi.FSReadRequest{Path: file, MaxBytes: 4}},
		hc{abi.CallFSRead, abi.FSReadRequest{Path: filepath.Join(dir, "missing")}},
		hc{abi.CallFSRead, abi.FSReadRequest{Path: filepath.Join(dir, "fifo")}},
		hc{abi.CallFSRead, abi.FSReadRequest{Path: dir}},
	)
	var got abi.FSReadResponse
	okInto(t, r[0], &got)
	if string(got.Content) != "0123456789" {
		t.Fatalf("content = %q", got.Content)
	}
	wantCode(t, r[1], abi.CodeTooLarge, "larger than the limit of 4 bytes")
	wantCode(t, r[2], abi.CodeNotFound, "does not exist")
	wantCode(t, r[3], abi.CodeIO, "not a regular file (other)")
	wantCode(t, r[4], abi.CodeIO, "not a regular file (directory)")
}

func TestFSWrite(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	caller.Grants[0].Setid = true // "setgid survives chown"
	src := filepath.Join(dir, "src")
	mustWrite(t, src, "from source", 0o600)
	outside := filepath.Join(tempDir(t), "outside")
	mustWrite(t, outside, "untouched", 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077) // the written mode must not depend on the umask
	defer syscall.Umask(old)

	tests := []struct {
		name    string
		req     abi.FSWriteRequest
		content string
		mode    os.FileMode
		uid     int
		code    string
	}{
		{name: "content", req: abi.FSWriteRequest{Path: filepath.Join(dir, "a"), Content: []byte("hi"), Mode: 0o644}, content: "hi", mode: 0o644},
		{name: "replace", req: abi.FSWriteRequest{Path: filepath.Join(dir, "a"), Content: []byte("again"), Mode: 0o600}, content: "again", mode: 0o600},
		{name: "empty file", req: abi.FSWriteRequest{Path: filepath.Join(dir, "e"), Mode: 0o640}, content: "", mode: 0o640},
		{name: "source", req: abi.FSWriteRequest{Path: filepath.Join(dir, "b"), Source: src, Mode: 0o644}, content: "from source", mode: 0o644},
		{name: "owner by id", req: abi.FSWriteRequest{Path: filepath.Join(dir, "c"), Content: []byte("x"), Mode: 0o644, Owner: "4242", Group: "4343"}, content: "x", mode: 0o644, uid: 4242},
		{name: "setgid survives chown", req: abi.FSWriteRequest{Path: filepath.Join(dir, "g"), Content: []byte("x"), Mode: 0o2755, Owner: "12", Group: "12"}, content: "x", mode: 0o755 | os.ModeSetgid, uid: 12},
		{name: "symlink replaced, not followed", req: abi.FSWriteRequest{Path: filepath.Join(dir, "link"), Content: []byte("new"), Mode: 0o644}, content: "new", mode: 0o644},
		{name: "onto a directory", req: abi.FSWriteRequest{Path: filepath.Join(dir, "sub"), Content: []byte("x"), Mode: 0o644}, code: abi.CodeExists},
		{name: "missing parent", req: abi.FSWriteRequest{Path: filepath.Join(dir, "nope", "x"), Mode: 0o644}, code: abi.CodeNotFound},
		{name: "unknown owner", req: abi.FSWriteRequest{Path: filepath.Join(dir, "d"), Mode: 0o644, Owner: "no-such-user-ccm"}, code: abi.CodeNotFound},
		{name: "bad mode", req: abi.FSWriteRequest{Path: filepath.Join(dir, "d"), Mode: 0o10644}, code: abi.CodeInvalid},
		{name: "missing source", req: abi.FSWriteRequest{Path: filepath.Join(dir, "d"), Source: filepath.Join(dir, "nosrc"), Mode: 0o644}, code: abi.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, caller, hc{abi.CallFSWrite, tt.req})[0]
			if tt.code != "" {
				wantCode(t, r, tt.code, "")
				return
			}
			okInto(t, r, nil)
			b, err := os.ReadFile(tt.req.Path)
			if err != nil || string(b) != tt.content {
				t.Fatalf("content = %q, %v; want %q", b, err, tt.content)
			}
			fi, err := os.Lstat(tt.req.Path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.mode {
				t.Fatalf("mode = %v, want %v", fi.Mode(), tt.mode)
			}
			if uid := int(fi.Sys().(*syscall.Stat_t).Uid); uid != tt.uid {
				t.Fatalf("uid = %d, want %d", uid, tt.uid)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "untouched" {
		t.Fatalf("write through a symlink changed its target: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != "" || e.Name()[0] == '.' {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

func TestFSMkdir(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	mustWrite(t, filepath.Join(dir, "file"), "", 0o644)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	tests := []struct {
		name string
		req  abi.FSMkdirRequest
		mode os.FileMode
		uid  int
		code string
	}{
		{name: "simple", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "a"), Mode: 0o755}, mode: 0o755},
		{name: "existing fixes mode and owner", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "a"), Mode: 0o750, Owner: "77"}, mode: 0o750, uid: 77},
		{name: "parents", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "p", "q", "r"), Mode: 0o711, Parents: true}, mode: 0o711},
		{name: "sticky", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "s"), Mode: 0o1777}, mode: 0o777 | os.ModeSticky},
		{name: "missing parent", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "x", "y"), Mode: 0o755}, code: abi.CodeNotFound},
		{name: "file in the way", req: abi.FSMkdirRequest{Path: filepath.Join(dir, "file"), Mode: 0o755}, code: abi.CodeExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, caller, hc{abi.CallFSMkdir, tt.req})[0]
			if tt.code != "" {
				wantCode(t, r, tt.code, "")
				return
			}
			okInto(t, r, nil)
			fi, err := os.Lstat(tt.req.Path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.mode|os.ModeDir {
				t.Fatalf("mode = %v, want %v", fi.Mode(), tt.mode|os.ModeDir)
			}
			if uid := int(fi.Sys().(*syscall.Stat_t).Uid); uid != tt.uid {
				t.Fatalf("uid = %d, want %d", uid, tt.uid)
			}
		})
	}
}

func TestFSRemove(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	target := filepath.Join(dir, "target")
	for _, d := range []string{"emptydir", "full/sub", "target"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(dir, "file"), "", 0o644)
	mustWrite(t, filepath.Join(dir, "full/sub/f"), "", 0o644)
	mustWrite(t, filepath.Join(target, "keep"), "", 0o644)
	if err := os.Symlink(target, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "full/sub/link")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		req  abi.FSRemoveRequest
		code string
	}{
		{name: "file", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "file")}},
		{name: "symlink to a directory removes the link", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "dirlink"), Recursive: true}},
		{name: "empty directory", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "emptydir")}},
		{name: "non-empty directory", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "full")}, code: abi.CodeExists},
		{name: "recursive, links not followed", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "full"), Recursive: true}},
		{name: "missing", req: abi.FSRemoveRequest{Path: filepath.Join(dir, "missing")}, code: abi.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, caller, hc{abi.CallFSRemove, tt.req})[0]
			if tt.code != "" {
				wantCode(t, r, tt.code, "")
				return
			}
			okInto(t, r, nil)
			if _, err := os.Lstat(tt.req.Path); !os.IsNotExist(err) {
				t.Fatalf("%s still exists: %v", tt.req.Path, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
		t.Fatalf("removal followed a symlink: %v", err)
	}
}

func TestFSChownChmod(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	caller.Grants[0].Setid = true // the chmod 04711 below
	file := filepath.Join(dir, "f")
	mustWrite(t, file, "", 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	r := apply(t, h, caller,
		hc{abi.CallFSChown, abi.FSChownRequest{Path: file, Owner: "101", Group: "root"}},
		hc{abi.CallFSChown, abi.FSChownRequest{Path: link, Owner: "202"}},
		hc{abi.CallFSChmod, abi.FSChmodRequest{Path: file, Mode: 0o4711}},
		hc{abi.CallFSChmod, abi.FSChmodRequest{Path: link, Mode: 0o600}},
		hc{abi.CallFSChown, abi.FSChownRequest{Path: filepath.Join(dir, "missing"), Owner: "1"}},
	)
	okInto(t, r[0], nil)
	okInto(t, r[1], nil)
	okInto(t, r[2], nil)
	wantCode(t, r[3], abi.CodeInvalid, "it is a symlink")
	wantCode(t, r[4], abi.CodeNotFound, "")
	fi, _ := os.Lstat(file)
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 101 || st.Gid != 0 || fi.Mode() != 0o711|os.ModeSetuid {
		t.Fatalf("file: uid %d gid %d mode %v", st.Uid, st.Gid, fi.Mode())
	}
	li, _ := os.Lstat(link)
	if uid := li.Sys().(*syscall.Stat_t).Uid; uid != 202 {
		t.Fatalf("lchown: link uid = %d, want 202", uid)
	}
}

func TestFSList(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	mustWrite(t, filepath.Join(dir, "b"), "", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	r := apply(t, h, caller,
		hc{abi.CallFSList, abi.FSListRequest{Path: dir}},
		hc{abi.CallFSList, abi.FSListRequest{Path: filepath.Join(dir, "b")}},
	)
	var got abi.FSListResponse
	okInto(t, r[0], &got)
	want := []abi.DirEntry{{Name: "a", Type: "directory"}, {Name: "b", Type: "file"}, {Name: "c", Type: "symlink"}}
	if !slices.Equal(got.Entries, want) {
		t.Fatalf("entries = %v, want %v", got.Entries, want)
	}
	wantCode(t, r[1], abi.CodeNotFound, "not a directory")
}

func TestUserGroupLookup(t *testing.T) {
	h := sharedHost(t)
	caller := trust.Caller{Grants: trust.Chain{{Users: true}}}
	r := apply(t, h, caller,
		hc{abi.CallUserLookup, abi.UserLookupRequest{Name: "root"}},
		hc{abi.CallUserLookup, abi.UserLookupRequest{ID: "0"}},
		hc{abi.CallGroupLookup, abi.GroupLookupRequest{Name: "root"}},
		hc{abi.CallGroupLookup, abi.GroupLookupRequest{ID: "0"}},
		hc{abi.CallUserLookup, abi.UserLookupRequest{Name: "no-such-user-ccm"}},
		hc{abi.CallUserLookup, abi.UserLookupRequest{Name: "root", ID: "0"}},
		hc{abi.CallGroupLookup, abi.GroupLookupRequest{ID: "abc"}},
	)
	for i := range 2 {
		var u abi.UserLookupResponse
		okInto(t, r[i], &u)
		if u.Name != "root" || u.UID != 0 || u.GID != 0 || u.Home != "/root" {
			t.Fatalf("user %d = %+v", i, u)
		}
	}
	for i := 2; i < 4; i++ {
		var g abi.GroupLookupResponse
		okInto(t, r[i], &g)
		if g.Name != "root" || g.GID != 0 {
			t.Fatalf("group %d = %+v", i, g)
		}
	}
	wantCode(t, r[4], abi.CodeNotFound, `user "no-such-user-ccm" not found`)
	wantCode(t, r[5], abi.CodeInvalid, "exactly one of name and id")
	wantCode(t, r[6], abi.CodeInvalid, "not all digits")
}

func TestLookup(t *testing.T) {
	h := sharedHost(t)
	caller := trust.Caller{Lookup: func(path string) (any, bool) {
		if path == "facts.host.info.hostname" {
			return "web1", true
		}
		return nil, false
	}}
	r := apply(t, h, caller,
		hc{abi.CallLookup, abi.LookupRequest{Path: "facts.host.info.hostname"}},
		hc{abi.CallLookup, abi.LookupRequest{Path: "data.missing"}},
	)
	var got abi.LookupResponse
	okInto(t, r[0], &got)
	if !got.Found || got.Value != "web1" {
		t.Fatalf("got %+v", got)
	}
	got = abi.LookupResponse{}
	okInto(t, r[1], &got)
	if got.Found {
		t.Fatalf("missing path found: %+v", got)
	}
}

func statT(fi os.FileInfo) *syscall.Stat_t { return fi.Sys().(*syscall.Stat_t) }
