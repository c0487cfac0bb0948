package main

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// me is the test process's user and group, the default owner of cases so
// they run without root.
type me struct {
	user, group string
	uid, gid    int
}

func current(t *testing.T) me {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatalf("current user: %v", err)
	}
	g, err := user.LookupGroupId(strconv.Itoa(os.Getgid()))
	if err != nil {
		t.Fatalf("current group: %v", err)
	}
	return me{user: u.Username, group: g.Name, uid: os.Getuid(), gid: os.Getgid()}
}

// needRoot skips a case that chowns to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown to another user")
	}
	if _, err := user.Lookup("daemon"); err != nil {
		t.Skip("needs a daemon user")
	}
	if _, err := user.LookupGroup("daemon"); err != nil {
		t.Skip("needs a daemon group")
	}
}

// props is a valid present file with content, owned by the test user.
func (m me) props(mod func(p map[string]any)) map[string]any {
	p := map[string]any{
		"ensure": "present", "content": "hello\n",
		"owner": m.user, "group": m.group, "mode": "0644",
	}
	if mod != nil {
		mod(p)
	}
	return p
}

func request(name string, p map[string]any, workingDir string) abi.Request {
	return abi.Request{Type: "file", Name: name, Properties: p, WorkingDir: workingDir}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path, owner, group string) {
	t.Helper()
	u, err := user.Lookup(owner)
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(g.Gid)
	if err := os.Lchown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}

// attrs is what a check asserts about a path.
type attrs struct {
	content *string // nil = do not check
	mode    os.FileMode
	dir     bool
	uid     int // -1 = do not check
	gid     int
}

func wantFile(t *testing.T, path string, want attrs) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	if want.dir != fi.IsDir() || (!want.dir && !fi.Mode().IsRegular()) {
		t.Fatalf("%s has type %v, want dir=%v", path, fi.Mode().Type(), want.dir)
	}
	if fi.Mode().Perm() != want.mode {
		t.Fatalf("%s has mode %04o, want %04o", path, fi.Mode().Perm(), want.mode)
	}
	sys := fi.Sys().(*syscall.Stat_t)
	if want.uid >= 0 && int(sys.Uid) != want.uid {
		t.Fatalf("%s has uid %d, want %d", path, sys.Uid, want.uid)
	}
	if want.gid >= 0 && int(sys.Gid) != want.gid {
		t.Fatalf("%s has gid %d, want %d", path, sys.Gid, want.gid)
	}
	if want.content != nil {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != *want.content {
			t.Fatalf("%s has content %q, want %q", path, b, *want.content)
		}
	}
}

func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("%s should be absent, lstat: %v", path, err)
	}
}

func str(s string) *string { return &s }

func wantError(t *testing.T, got, want string) {
	t.Helper()
	if want == "" && got != "" {
		t.Fatalf("unexpected error: %s", got)
	}
	if !strings.Contains(got, want) {
		t.Fatalf("error %q does not contain %q", got, want)
	}
}

// noMutation runs fn and asserts the tree under dir is unchanged and the host
// saw no mutating call.
func noMutation(t *testing.T, dir string, h *fakehost.Host, fn func()) {
	t.Helper()
	before := fstree.Describe(t, dir)
	fn()
	if m := h.Mutations(); len(m) > 0 {
		t.Fatalf("read-only run made mutating calls %v", m)
	}
	if after := fstree.Describe(t, dir); after != before {
		t.Fatalf("read-only run changed the tree:\n%s\nwas\n%s", after, before)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func lookupUID(t *testing.T, name string) int {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(u.Uid)
	return n
}

func lookupGID(t *testing.T, name string) int {
	t.Helper()
	g, err := user.LookupGroup(name)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(g.Gid)
	return n
}

// info is the plugin's own description: the host applies its capabilities
// to every host call of a test, as in ccm.
var info = newFileType().Info()
