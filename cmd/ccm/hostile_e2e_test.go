package main

// The hostile plugin suite (testdata/plugins/hostile): a vendor manifest
// applied with allow_apply: false and a narrow grant declares one resource
// per attack, interleaved with ordinary file resources. Each attack must fail
// its own resource with a message naming what was refused; the files around
// it must still apply; the ccm process must survive; and a sentinel tree
// outside the grant must be byte-for-byte unchanged. docs/security.md
// ("Hostile plugins") holds the table of cases and outcomes.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// hostileCase is one attack: the resource's properties besides "attack",
// and what its event's error must contain (with @WORK@, @SENT@, @ECHO@ and
// @ADDR@ replaced). ok marks the one case whose resource succeeds.
type hostileCase struct {
	attack string
	props  string // YAML flow-map entries
	want   []string
	ok     bool
}

const hostilePlugin = `plugin for type "hostile": ccm_apply`

func hostileCases() []hostileCase {
	return []hostileCase{
		{attack: "read_outside", props: `path: "@SENT@/shadow"`,
			want: []string{"ccm_fs_read: denied: fs_read not granted for @SENT@/shadow; add it to grants in the apply"}},
		{attack: "write_dotdot", props: `path: "@WORK@/../sentinel/pwned"`,
			want: []string{`ccm_fs_write: invalid: path "@WORK@/../sentinel/pwned" is not canonical`}},
		{attack: "write_symlink_parent", props: `path: "@WORK@/link/pwned"`,
			want: []string{"ccm_fs_write: denied: fs_write not granted for @WORK@/link/pwned (resolved to @SENT@/pwned)"}},
		{attack: "chmod_symlink", props: `path: "@WORK@/shadowlink"`,
			want: []string{"ccm_fs_chmod: invalid: chmod @WORK@/shadowlink: it is a symlink, and chmod would change its target"}},
		{attack: "exec_ungranted", props: `argv: ["/bin/cat", "@SENT@/shadow"]`,
			want: []string{"ccm_exec: denied: exec not granted for /bin/cat"}},
		{attack: "exec_injection", props: `argv: ["@ECHO@", "hello"], path: "@SENT@/injected"`,
			want: []string{`argv ran inert (exit 0, stdout "hello ; touch @SENT@/injected $(touch`, "shell: ccm_exec: denied: exec not granted for /bin/sh"}},
		{attack: "exec_path_hijack", props: `argv: ["echo"], dir: "@WORK@", path: "@SENT@/hijacked"`,
			want: []string{"ccm_exec: denied: exec not granted for echo (resolved to @WORK@/echo)"}},
		{attack: "infinite_loop",
			want: []string{hostilePlugin + ": exceeded the call_timeout limit of 2s; the instance was discarded"}},
		{attack: "alloc_4gib",
			want: []string{hostilePlugin, "out of memory", "exceeded the memory_mb limit of 256 MiB"}},
		{attack: "output_100mib",
			want: []string{hostilePlugin + " output of 104857600 bytes exceeded the output_bytes limit of 16777216"}},
		{attack: "panic",
			want: []string{hostilePlugin + ": wasm error: unreachable: panic: hostile plugin panics on purpose"}},
		{attack: "trap",
			want: []string{hostilePlugin + ": wasm error: out of bounds memory access"}},
		{attack: "exit",
			want: []string{hostilePlugin + " returned no output document (did the plugin exit"}},
		{attack: "exit_after_output", ok: true},
		{attack: "malformed_json",
			want: []string{`plugin for type "hostile": decode ccm_apply output: invalid character`}},
		{attack: "output_bad_offset",
			want: []string{hostilePlugin + " returned no output document"}},
		{attack: "hostcall_bad_offsets",
			want: []string{"0x0: invalid: decode request: EOF", "0xffffffff: invalid: ccm_fs_read: bad request block: out of memory bounds", "0x8000000000000005: no answer"}},
		{attack: "hostcall_flood", props: `count: 1000000`,
			want: []string{hostilePlugin + ": exceeded the host_calls limit of 20000 calls per call; the instance was discarded"}},
		{attack: "wasi_files", props: `path: "@SENT@/shadow"`,
			want: []string{"wasi: no file reachable: no preopened directory, every open failed"}},
		{attack: "wasi_env",
			want: []string{"wasi: environment has 0 variables, arguments []"}},
		{attack: "wasi_sockets", props: `path: "@ADDR@"`,
			want: []string{"wasi: no socket: dial and sock_accept on fds 0-15 failed"}},
	}
}

// sentinelTree lays out files, a subdirectory and symlinks (one to a file
// outside the tree) under dir, for hashing.
func sentinelTree(t *testing.T, dir string) {
	t.Helper()
	files := []struct {
		path, content string
		mode          fs.FileMode
	}{
		{"shadow", "root:$6$salt$hash:19000:0:99999:7:::\n", 0o600},
		{"passwd", "root:x:0:0:root:/root:/bin/bash\n", 0o644},
		{"sub/deeper/notes.txt", "keep me\n", 0o640},
		{"sub/run.sh", "#!/bin/sh\necho hi\n", 0o755},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"sub/shadow-link": "../shadow", "etc-passwd": "/etc/passwd"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileSetup lays out dir: work/ (granted, with symlinks planted in it
// pointing outside), sentinel/ (outside the grant), the root manifest m.yaml,
// the vendor manifests vendor/manifest.yaml (every attack, files between
// them) and vendor/impostor.yaml, and their plugins, pinned by sha256. It
// returns the replacer for expected messages.
func hostileSetup(t *testing.T, dir, addr string) *strings.Replacer {
	t.Helper()
	work, sent := filepath.Join(dir, "work"), filepath.Join(dir, "sentinel")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	sentinelTree(t, sent)
	if err := os.Symlink(sent, filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(sent, "shadow"), filepath.Join(work, "shadowlink")); err != nil {
		t.Fatal(err)
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Fatal(err)
	}
	if echo, err = filepath.EvalSymlinks(echo); err != nil {
		t.Fatal(err)
	}
	var r *strings.Replacer
	for _, f := range []string{"hostile", "impostor"} {
		wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", f, f+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "vendor"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "vendor", f+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(wasm)
		r = strings.NewReplacer("@WORK@", work, "@SENT@", sent, "@ECHO@", echo, "@ADDR@", addr, "@"+strings.ToUpper(f)+"_SUM@", hex.EncodeToString(sum[:]))
		if f == "impostor" {
			writeManifest(t, dir, "vendor/impostor.yaml", r.Replace(`
ccm:
  plugins:
    - {path: impostor.wasm, sha256: "@IMPOSTOR_SUM@"}
  resources:
    - file:
        - @WORK@/impostor: {ensure: present, content: "x", mode: "0644", owner: "@USER@", group: "@GROUP@"}
`))
			continue
		}
		var b strings.Builder
		b.WriteString(r.Replace("ccm:\n  plugins:\n    - {path: hostile.wasm, sha256: \"@HOSTILE_SUM@\"}\n  resources:\n"))
		for i, c := range hostileCases() {
			fmt.Fprintf(&b, "    - hostile:\n        - %s: {attack: %s", c.attack, c.attack)
			if c.props != "" {
				b.WriteString(", " + r.Replace(c.props))
			}
			b.WriteString("}\n")
			fmt.Fprintf(&b, "    - file:\n        - %s/ok-%02d: {ensure: present, content: \"%d\\n\", mode: \"0644\", owner: \"@USER@\", group: \"@GROUP@\"}\n", work, i, i)
		}
		writeManifest(t, dir, "vendor/manifest.yaml", b.String())
	}
	r = strings.NewReplacer("@WORK@", work, "@SENT@", sent, "@ECHO@", echo, "@ADDR@", addr)
	writeManifest(t, dir, "m.yaml", r.Replace(`
ccm:
  resources:
    - file:
        - @WORK@/before:
            {ensure: present, content: "before\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
    - apply:
        - vendor/manifest.yaml:
            allow_apply: false
            grants:
              fs_read: ["@WORK@/**", "vendor/hostile.wasm"]
              fs_write: ["@WORK@/**"]
              exec: ["@ECHO@"]
              users: true
            limits: {call_timeout: 2s, host_calls: 20000}
        - vendor/impostor.yaml:
            allow_apply: false
            grants:
              fs_read: ["@WORK@/**", "vendor/impostor.wasm"]
              fs_write: ["@WORK@/**"]
              users: true
    - file:
        - @WORK@/after:
            {ensure: present, content: "after\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
`))
	return r
}

// hostileSecret is in the ccm process's environment; no plugin may see it.
const hostileSecret = "CCM_HOSTILE_SECRET=hunter2-do-not-leak"

func TestHostilePlugins(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	r := hostileSetup(t, dir, ln.Addr().String())
	sentinel := filepath.Join(dir, "sentinel")
	before := fstree.Describe(t, sentinel)

	ccmtest.Binary(t) // built before the clock starts
	start := time.Now()
	out, res := applyJSONEnv(t, dir, []string{hostileSecret}, "m.yaml")
	t.Logf("ccm apply took %v", time.Since(start))
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (some resources failed, the run completed)\nstderr:\n%s", res.Code, res.Stderr)
	}

	if after := fstree.Describe(t, sentinel); after != before {
		t.Errorf("the sentinel tree outside the grant changed:\n%s\nwas\n%s", after, before)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("a plugin connected to the test's listener %d times", n)
	}
	if strings.Contains(res.Stdout+res.Stderr, "hunter2") {
		t.Errorf("the ccm process's environment leaked into the output")
	}
	for _, f := range []string{"injected", "hijacked", "pwned"} {
		if _, err := os.Lstat(filepath.Join(sentinel, f)); err == nil {
			t.Errorf("sentinel/%s exists", f)
		}
	}

	for i, c := range hostileCases() {
		e := out.event(t, "hostile#"+c.attack)
		msg := strings.Join(e.Error, "; ")
		t.Logf("%-22s %-12v %s", c.attack, e.Duration.Round(time.Millisecond), msg)
		if c.ok {
			if e.Failed {
				t.Errorf("hostile#%s failed: %s", c.attack, msg)
			}
		} else if !e.Failed {
			t.Errorf("hostile#%s did not fail: %+v", c.attack, e)
		}
		for _, w := range c.want {
			if w = r.Replace(w); !strings.Contains(msg, w) {
				t.Errorf("hostile#%s error %q\ndoes not contain %q", c.attack, msg, w)
			}
		}
		// The ordinary resource after each attack applied.
		ok := filepath.Join(dir, "work", fmt.Sprintf("ok-%02d", i))
		if e := out.event(t, "file#"+ok); e.Failed || !e.Changed {
			t.Errorf("file#%s after hostile#%s: %+v", ok, c.attack, e.Error)
		}
		if b, err := os.ReadFile(ok); err != nil || string(b) != fmt.Sprintf("%d\n", i) {
			t.Errorf("%s: %q, %v", ok, b, err)
		}
	}
	for _, f := range []string{"before", "after"} {
		p := filepath.Join(dir, "work", f)
		if e := out.event(t, "file#"+p); e.Failed || !e.Changed {
			t.Errorf("file#%s: %+v", p, e.Error)
		}
	}

	// The impostor claiming type file is refused when its manifest loads:
	// its apply fails before any of its resources runs.
	e := out.event(t, "apply#vendor/impostor.yaml")
	msg := strings.Join(e.Error, "; ")
	t.Logf("%-22s %s", "impostor", msg)
	for _, w := range []string{"vendor/impostor.yaml:4: ccm.plugins[0]", `provides type "file", which is built in`, "a plugin may not shadow a built-in type"} {
		if !e.Failed || !strings.Contains(msg, w) {
			t.Errorf("apply#vendor/impostor.yaml: %q, want it failed with %q", msg, w)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "work", "impostor")); err == nil {
		t.Error("a resource of the impostor's manifest ran")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the suite took %v", d)
	}
}
