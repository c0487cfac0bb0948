package main

// The filesystem half of the hostile suite (docs/security.md,
// "Filesystem"): the hostile plugin, pinned in a vendor manifest applied
// with allow_apply: false and a grant of WORK only, races a directory swap,
// and goes for planted hard links, FIFOs and privilege bits; the vendor's
// templates and file resources go for the same links. The sentinel tree
// outside the grant is hashed before and after.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"golang.org/x/sys/unix"
)

// fsCases are the filesystem attacks; ref is the resource's name, the
// event to check. @WORK@ and @SENT@ are replaced.
func fsCases() []hostileCase {
	return []hostileCase{
		{attack: "fs_race", props: `dir: "@WORK@/swap", leak: "root:$6$", count: 800`,
			want: []string{"fs_race: 800 calls: ", "nothing outside read"}},
		{attack: "hardlink_read", props: `op: read, path: "@WORK@/hardshadow"`,
			want: []string{"ccm_fs_read: denied: read refused for @WORK@/hardshadow: it has 2 hard links"}},
		{attack: "hardlink_checksum", props: `op: checksum, path: "@WORK@/hardshadow"`,
			want: []string{"ccm_fs_stat: denied: checksum refused for @WORK@/hardshadow: it has 2 hard links"}},
		{attack: "hardlink_chmod", props: `op: chmod, mode: 438, path: "@WORK@/hardshadow"`,
			want: []string{"ccm_fs_chmod: denied: chmod refused for @WORK@/hardshadow: it has 2 hard links"}},
		{attack: "hardlink_chown", props: `op: chown, owner: "4242", path: "@WORK@/hardshadow"`,
			want: []string{"ccm_fs_chown: denied: chown refused for @WORK@/hardshadow: it has 2 hard links"}},
		{attack: "hardlink_source", props: `op: write, mode: 420, path: "@WORK@/copied", source: "@WORK@/hardshadow"`,
			want: []string{"ccm_fs_write: denied: open source refused for @WORK@/hardshadow: it has 2 hard links"}},
		{attack: "setuid_write", props: `op: write, mode: 2541, path: "@WORK@/suid"`, // 04755
			want: []string{"ccm_fs_write: denied: ccm_fs_write refused for @WORK@/suid: mode 04755 sets the setuid or setgid bit; add setid: true to grants in the apply"}},
		{attack: "setgid_chmod", props: `op: chmod, mode: 1517, path: "@WORK@/plain"`, // 02755
			want: []string{"ccm_fs_chmod: denied: ccm_fs_chmod refused for @WORK@/plain: mode 02755 sets the setuid or setgid bit"}},
		{attack: "setgid_mkdir", props: `op: mkdir, mode: 1533, path: "@WORK@/sgdir"`, // 02775
			want: []string{"ccm_fs_mkdir: denied: ccm_fs_mkdir refused for @WORK@/sgdir: mode 02775 sets the setuid or setgid bit"}},
		{attack: "fifo_read", props: `op: read, path: "@WORK@/fifo"`,
			want: []string{"ccm_fs_read: io: read @WORK@/fifo: not a regular file (other)"}},
		{attack: "fifo_source", props: `op: write, mode: 420, path: "@WORK@/fromfifo", source: "@WORK@/fifo"`,
			want: []string{"ccm_fs_write: io: open source @WORK@/fifo: not a regular file (other)"}},
	}
}

// fsSetup lays out dir like hostileSetup (work/ granted, sentinel/ outside)
// and plants: work/swap (a directory with decoys) and work/swapalt (a
// symlink to the sentinel), which the test swaps; work/hardshadow, a hard
// link to sentinel/shadow; work/fifo; work/.target.ccm-tmp, a hard link to
// sentinel/passwd where a write of work/target puts its temp file.
func fsSetup(t *testing.T, dir string) *strings.Replacer {
	t.Helper()
	work, sent := filepath.Join(dir, "work"), filepath.Join(dir, "sentinel")
	sentinelTree(t, sent)
	for _, d := range []string{"swap/sub"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"swap/shadow": "decoy\n", "swap/passwd": "decoy\n", "plain": "plain\n"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(sent, filepath.Join(work, "swapalt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(sent, "shadow"), filepath.Join(work, "hardshadow")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(sent, "passwd"), filepath.Join(work, ".target.ccm-tmp")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(work, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", "hostile", "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "vendor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vendor", "hostile.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	r := strings.NewReplacer("@WORK@", work, "@SENT@", sent, "@HOSTILE_SUM@", hex.EncodeToString(sum[:]))
	var b strings.Builder
	b.WriteString(r.Replace("ccm:\n  plugins:\n    - {path: hostile.wasm, sha256: \"@HOSTILE_SUM@\"}\n  resources:\n"))
	for _, c := range fsCases() {
		attack := "fs_op"
		if c.attack == "fs_race" {
			attack = c.attack
		}
		fmt.Fprintf(&b, "    - hostile:\n        - %s: {attack: %s, %s}\n", c.attack, attack, r.Replace(c.props))
	}
	// The vendor's own templates and the built-in file type go for the
	// hard link too; an ordinary write replaces the planted temp file.
	b.WriteString(r.Replace(`    - file:
        - @WORK@/stolen: {ensure: present, content: "{{ readFile('@WORK@/hardshadow') }}", mode: "0644", owner: "@USER@", group: "@GROUP@"}
        - @WORK@/hardshadow: {ensure: present, content: "mine\n", mode: "0666", owner: "@USER@", group: "@GROUP@"}
        - @WORK@/target: {ensure: present, content: "target\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
`))
	writeManifest(t, dir, "vendor/manifest.yaml", b.String())
	writeManifest(t, dir, "m.yaml", r.Replace(`
ccm:
  resources:
    - apply:
        - vendor/manifest.yaml:
            allow_apply: false
            grants:
              fs_read: ["@WORK@/**", "vendor/hostile.wasm"]
              fs_write: ["@WORK@/**"]
              users: true
            limits: {call_timeout: 20s}
`))
	return r
}

// TestHostileFilesystem runs the filesystem attacks through the ccm binary
// while a second process (this test) swaps work/swap, a granted directory,
// with a symlink to the sentinel tree, atomically and in a loop, for the
// whole run.
func TestHostileFilesystem(t *testing.T) {
	dir := t.TempDir()
	r := fsSetup(t, dir)
	work, sentinel := filepath.Join(dir, "work"), filepath.Join(dir, "sentinel")
	before := fstree.Describe(t, sentinel)
	ccmtest.Binary(t)

	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		swap, alt := filepath.Join(work, "swap"), filepath.Join(work, "swapalt")
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, swap, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			if swaps.Add(1)%64 == 0 {
				time.Sleep(10 * time.Microsecond) // let ccm's threads run on a 2-core machine
			}
		}
	}()
	start := time.Now()
	out, res := applyJSONEnv(t, dir, nil, "m.yaml")
	stop.Store(true)
	wg.Wait()
	t.Logf("ccm apply took %v; %d swaps meanwhile", time.Since(start), swaps.Load())
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (some resources failed, the run completed)\nstderr:\n%s", res.Code, res.Stderr)
	}
	if after := fstree.Describe(t, sentinel); after != before {
		t.Errorf("the sentinel tree outside the grant changed:\n%s\nwas\n%s", after, before)
	}
	for _, f := range []string{"pwned", "suid", "sgdir", "sub/deeper/pwned"} {
		if _, err := os.Lstat(filepath.Join(sentinel, f)); err == nil {
			t.Errorf("sentinel/%s exists", f)
		}
	}
	fi, err := os.Stat(filepath.Join(sentinel, "shadow"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid == 4242 || fi.Mode().Perm() != 0o600 {
		t.Errorf("sentinel/shadow: %v %v", fi, err)
	}
	for _, c := range fsCases() {
		e := out.event(t, "hostile#"+c.attack)
		msg := strings.Join(e.Error, "; ")
		t.Logf("%-18s %-8v %s", c.attack, e.Duration.Round(time.Millisecond), msg)
		if !e.Failed {
			t.Errorf("hostile#%s did not fail: %+v", c.attack, e)
		}
		for _, w := range c.want {
			if w = r.Replace(w); !strings.Contains(msg, w) {
				t.Errorf("hostile#%s error %q\ndoes not contain %q", c.attack, msg, w)
			}
		}
	}
	// The template and the built-in file type cannot use the hard link.
	for _, ref := range []string{"stolen", "hardshadow"} {
		e := out.event(t, "file#"+filepath.Join(work, ref))
		msg := strings.Join(e.Error, "; ")
		t.Logf("file#WORK/%-9s %s", ref, msg)
		if !e.Failed || !strings.Contains(msg, "it has 2 hard links") {
			t.Errorf("file#%s: %q, want refused for its hard links", ref, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "stolen")); err == nil {
		t.Errorf("work/stolen was written")
	}
	// The planted temp file was removed, not written through.
	if e := out.event(t, "file#"+filepath.Join(work, "target")); e.Failed {
		t.Errorf("file#WORK/target: %v", e.Error)
	}
	if b, err := os.ReadFile(filepath.Join(work, "target")); err != nil || string(b) != "target\n" {
		t.Errorf("work/target: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(work, ".target.ccm-tmp")); err == nil {
		t.Errorf("the planted temp file is still there")
	}
}

// TestInterruptedWrite kills ccm (SIGKILL) while it writes a large file and
// checks the target is never partial: absent or complete, whenever the kill
// lands. The next run writes it and removes the temp file the killed run
// left.
func TestInterruptedWrite(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "big.src")
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i % 251)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "out", "big")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "out", ".big.ccm-tmp")
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - `+target+`: {ensure: present, source: big.src, mode: "0644", owner: "@USER@", group: "@GROUP@"}
`)
	complete := func(when string) {
		t.Helper()
		b, err := os.ReadFile(target)
		if err == nil && len(b) != len(data) {
			t.Fatalf("%s: the target is partial: %d of %d bytes", when, len(b), len(data))
		}
	}
	cmd := ccmtest.Command(t, dir, nil, "apply", "m.yaml")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sawTemp := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		if fi, err := os.Lstat(tmp); err == nil && fi.Size() > 0 {
			sawTemp = true
			break
		}
		if _, err := os.Stat(target); err == nil {
			break // done before the poll saw the temp file
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	complete("after SIGKILL")
	t.Logf("killed mid-write: %v", sawTemp)

	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	if res.Code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	complete("after the next run")
	if _, err := os.Stat(target); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tmp); err == nil {
		t.Fatal("the next run left the interrupted write's temp file")
	}
}
