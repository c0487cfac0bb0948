package host

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestGrantsFS checks path grants end to end: what is outside, what only
// looks inside through a symlink, and paths the host never resolves.
func TestGrantsFS(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	outside := tempDir(t)
	secret := filepath.Join(outside, "secret")
	mustWrite(t, secret, "secret", 0o600)
	mustWrite(t, filepath.Join(dir, "f"), "f", 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "in"), filepath.Join(outside, "back")); err != nil {
		t.Fatal(err)
	}
	caller := trust.Caller{Grants: grantDir(t, dir)}

	tests := []struct {
		name string
		call hc
		code string
		msg  string
	}{
		{name: "write outside", call: hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(outside, "x"), Mode: 0o644}},
			code: abi.CodeDenied, msg: "fs_write not granted for " + filepath.Join(outside, "x") + "; add it to grants in the apply"},
		{name: "stat outside", call: hc{abi.CallFSStat, abi.FSStatRequest{Path: secret}}, code: abi.CodeDenied, msg: "fs_read not granted"},
		{name: "dot-dot", call: hc{abi.CallFSWrite, abi.FSWriteRequest{Path: dir + "/../x", Mode: 0o644}}, code: abi.CodeInvalid, msg: "not canonical"},
		{name: "relative", call: hc{abi.CallFSStat, abi.FSStatRequest{Path: "etc/passwd"}}, code: abi.CodeInvalid, msg: "not absolute"},
		{name: "trailing slash", call: hc{abi.CallFSStat, abi.FSStatRequest{Path: dir + "/"}}, code: abi.CodeInvalid, msg: "not canonical"},
		{name: "write through a parent symlink leading outside", call: hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "escape", "x"), Mode: 0o644}},
			code: abi.CodeDenied, msg: "(resolved to " + filepath.Join(outside, "x") + ")"},
		{name: "mkdir through a parent symlink", call: hc{abi.CallFSMkdir, abi.FSMkdirRequest{Path: filepath.Join(dir, "escape", "d"), Mode: 0o755}},
			code: abi.CodeDenied, msg: "fs_write not granted"},
		{name: "remove through a parent symlink", call: hc{abi.CallFSRemove, abi.FSRemoveRequest{Path: filepath.Join(dir, "escape", "secret")}},
			code: abi.CodeDenied, msg: "fs_write not granted"},
		{name: "read through a parent symlink", call: hc{abi.CallFSRead, abi.FSReadRequest{Path: filepath.Join(dir, "escape", "secret")}},
			code: abi.CodeDenied, msg: "fs_read not granted"},
		{name: "read follows a final symlink only inside", call: hc{abi.CallFSRead, abi.FSReadRequest{Path: filepath.Join(dir, "link")}},
			code: abi.CodeDenied, msg: "(resolved to " + secret + ")"},
		{name: "stat follow leading outside", call: hc{abi.CallFSStat, abi.FSStatRequest{Path: filepath.Join(dir, "link"), FollowSymlinks: true}},
			code: abi.CodeDenied, msg: "fs_read not granted"},
		{name: "stat of the link itself", call: hc{abi.CallFSStat, abi.FSStatRequest{Path: filepath.Join(dir, "link")}}},
		{name: "list through a parent symlink", call: hc{abi.CallFSList, abi.FSListRequest{Path: filepath.Join(dir, "escape")}},
			code: abi.CodeDenied, msg: "fs_read not granted"},
		{name: "an outside path resolving inside is inside", call: hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(outside, "back", "x"), Content: []byte("x"), Mode: 0o644}}},
		{name: "source outside", call: hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "copy"), Source: secret, Mode: 0o644}},
			code: abi.CodeDenied, msg: "fs_read not granted for " + secret},
		{name: "chown of the final symlink changes the link only", call: hc{abi.CallFSChown, abi.FSChownRequest{Path: filepath.Join(dir, "link"), Owner: "99"}}},
		{name: "remove of the final symlink removes the link only", call: hc{abi.CallFSRemove, abi.FSRemoveRequest{Path: filepath.Join(dir, "link")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, caller, tt.call)[0]
			if tt.code == "" {
				okInto(t, r, nil)
				return
			}
			wantCode(t, r, tt.code, tt.msg)
		})
	}
	fi, err := os.Lstat(secret)
	if err != nil {
		t.Fatalf("the target of a removed link is gone: %v", err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 {
		t.Fatalf("chown followed the final symlink: target uid %d", uid)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x")); !os.IsNotExist(err) {
		t.Fatalf("something was written outside the grant: %v", err)
	}
}

func TestGrantsMkdirParents(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	target := filepath.Join(dir, "a", "b")
	caller := trust.Caller{Grants: trust.Chain{{FSWrite: []string{target}}}}
	r := apply(t, h, caller, hc{abi.CallFSMkdir, abi.FSMkdirRequest{Path: target, Mode: 0o755, Parents: true}})[0]
	wantCode(t, r, abi.CodeDenied, "fs_write not granted for "+filepath.Join(dir, "a"))
	if _, err := os.Lstat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Fatalf("an ungranted parent was created: %v", err)
	}
}

func TestGrantsChain(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	if err := os.Mkdir(filepath.Join(dir, "narrow"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The child scope narrows the parent's grant: only both together count.
	caller := trust.Caller{Grants: grantDir(t, dir).Narrow(trust.Grant{FSWrite: []string{filepath.Join(dir, "narrow", "**")}})}
	r := apply(t, h, caller,
		hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "narrow", "ok"), Mode: 0o644}},
		hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "wide"), Mode: 0o644}},
		hc{abi.CallFSStat, abi.FSStatRequest{Path: dir}},
		hc{abi.CallUserLookup, abi.UserLookupRequest{Name: "root"}},
	)
	okInto(t, r[0], nil)
	wantCode(t, r[1], abi.CodeDenied, "fs_write not granted")
	wantCode(t, r[2], abi.CodeDenied, "fs_read not granted")
	wantCode(t, r[3], abi.CodeDenied, "users not granted; add users: true to grants")
}

func TestGrantsExec(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	dir := tempDir(t)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(bin, "tool")
	mustWrite(t, tool, "#!/bin/sh\necho tool ran\n", 0o755)
	// An ungranted executable is refused before a byte of it is read.
	secret := filepath.Join(bin, "secret")
	mustWrite(t, secret, "#!token-c0ffee\n", 0o755)
	tests := []struct {
		name  string
		grant trust.Grant
		req   abi.ExecRequest
		out   string
		code  string
		msg   string
	}{
		{name: "PATH lookup, granted", grant: trust.Grant{Exec: []string{tool, resolvedSh(t)}, Env: []string{"PATH"}},
			req: abi.ExecRequest{Argv: []string{"tool"}, Env: []string{"PATH=/nonexistent:relative:" + bin}}, out: "tool ran\n"},
		{name: "PATH lookup, matched on the resolved path", grant: trust.Grant{Exec: []string{"/usr/bin/*"}},
			req: abi.ExecRequest{Argv: []string{"tool"}, Env: []string{"PATH=" + bin}}, code: abi.CodeDenied, msg: "exec not granted for tool (resolved to " + tool + ")"},
		{name: "a PATH beyond the system directories needs env", grant: trust.Grant{Exec: []string{tool, resolvedSh(t)}},
			req: abi.ExecRequest{Argv: []string{"tool"}, Env: []string{"PATH=" + bin}}, code: abi.CodeDenied, msg: `PATH can make the program load or run other code; it needs an env entry "PATH"`},
		{name: "absolute, not granted", grant: trust.Grant{Exec: []string{"/usr/bin/true"}},
			req: abi.ExecRequest{Argv: []string{"/usr/bin/id"}}, code: abi.CodeDenied, msg: "exec not granted for /usr/bin/id"},
		{name: "default PATH", grant: trust.Grant{Exec: []string{"/usr/bin/id"}},
			req: abi.ExecRequest{Argv: []string{"id", "-u"}}, out: "0\n"},
		{name: "shell needs /bin/sh", grant: trust.Grant{Exec: []string{"/usr/bin/id"}},
			req: abi.ExecRequest{Shell: true, Command: "true"}, code: abi.CodeDenied, msg: "exec not granted for /bin/sh"},
		{name: "nothing of an ungranted program is read", grant: trust.Grant{Exec: []string{tool}},
			req: abi.ExecRequest{Argv: []string{secret}}, code: abi.CodeDenied, msg: "exec not granted for " + secret + ";"},
		{name: "a script's interpreter is matched too", grant: trust.Grant{Exec: []string{tool}},
			req: abi.ExecRequest{Argv: []string{tool}}, code: abi.CodeDenied, msg: "exec not granted for /bin/sh (the #! interpreter of " + tool + ") (resolved to " + resolvedSh(t) + ")"},
		{name: "symlinked /bin/sh is matched on its target", grant: trust.Grant{Exec: []string{"/bin/sh"}},
			req: abi.ExecRequest{Shell: true, Command: "true"}, code: abi.CodeDenied, msg: "exec not granted for /bin/sh (resolved to " + resolvedSh(t) + ")"},
		{name: "not in PATH", grant: trust.All(),
			req: abi.ExecRequest{Argv: []string{"no-such-tool-ccm"}}, code: abi.CodeNotFound, msg: `executable "no-such-tool-ccm" not found in PATH`},
		{name: "relative argv[0]", grant: trust.All(),
			req: abi.ExecRequest{Argv: []string{"./tool"}}, code: abi.CodeInvalid, msg: "argv[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, trust.Caller{Grants: trust.Chain{tt.grant}}, hc{abi.CallExec, tt.req})[0]
			if tt.code != "" {
				wantCode(t, r, tt.code, tt.msg)
				return
			}
			var got abi.ExecResponse
			okInto(t, r, &got)
			if got.Stdout != tt.out || got.ExitCode != 0 {
				t.Fatalf("got %+v, want stdout %q", got, tt.out)
			}
		})
	}
}
