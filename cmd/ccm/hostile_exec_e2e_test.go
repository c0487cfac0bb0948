package main

// The hostile exec suite: a vendor manifest applied with allow_apply: false
// and a narrow grant attacks through the built-in exec and file types (and
// a pinned third-party plugin), in apply and in --noop. The payloads are
// real: each would create a file in the sentinel tree if it ran. The
// sentinel tree is hashed before and after. docs/security.md ("Exec") holds
// the table of attacks and the rules that stop them.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// execAttack is one exec resource of the vendor manifest.
type execAttack struct {
	name  string
	props string   // YAML flow-map entries of the exec resource
	want  []string // parts of its error, in apply and in noop
	ok    bool     // the control case: runs (apply) / would run (noop)
}

func execAttacks() []execAttack {
	return []execAttack{
		{name: "ld_preload", props: `command: "@ECHO@ hi", onlyif: "@ECHO@ guard", environment: ["LD_PRELOAD=@WORK@/evil.so"]`,
			want: []string{"denied: environment of @ECHO@ refused: LD_PRELOAD can make the program load or run other code; it needs an env entry \"LD_PRELOAD\""}},
		{name: "ld_preload_lower_case", props: `command: "@ECHO@ hi", onlyif: "@ECHO@ guard", environment: ["ld_preload=@WORK@/evil.so"]`,
			want: []string{"ld_preload can make the program load or run other code"}},
		{name: "ld_audit", props: `command: "@ECHO@ hi", onlyif: "@ECHO@ guard", environment: ["LD_AUDIT=@WORK@/evil.so"]`,
			want: []string{"LD_AUDIT can make the program load or run other code"}},
		{name: "gconv_path", props: `command: "@ECHO@ hi", onlyif: "@ECHO@ guard", environment: ["GCONV_PATH=@WORK@"]`,
			want: []string{"GCONV_PATH can make the program load or run other code"}},
		{name: "bash_env", props: `command: "@TOOLS@/status.sh", onlyif: "@TOOLS@/status.sh", environment: ["BASH_ENV=@WORK@/payload.sh"]`,
			want: []string{"BASH_ENV can make the program load or run other code"}},
		{name: "bash_func", props: `command: "@TOOLS@/status.sh", onlyif: "@TOOLS@/status.sh", environment: ["BASH_FUNC_date%%=() { /usr/bin/touch @SENT@/bash_func_ran; }"]`,
			want: []string{"BASH_FUNC_date%% can make the program load or run other code"}},
		{name: "path_hijack", props: `command: "@TOOLS@/status.sh", onlyif: "@TOOLS@/status.sh", path: "@WORK@/bin:/usr/bin:/bin"`,
			want: []string{`PATH can make the program load or run other code; it needs an env entry "PATH"`}},
		{name: "locale_path", props: `command: "@ECHO@ hi", onlyif: "@ECHO@ guard", environment: ["LC_ALL=@WORK@/locale"]`,
			want: []string{"LC_ALL can make the program load or run other code"}},
		{name: "symlinked_dir", props: `command: "@TOOLS@/current/run", onlyif: "@TOOLS@/current/run"`,
			want: []string{"denied: exec not granted for @TOOLS@/current/run (resolved to @WORK@/release/run)"}},
		{name: "interpreter_ungranted", props: `command: "@TOOLS@/envscript.sh", onlyif: "@TOOLS@/envscript.sh"`,
			want: []string{"denied: exec not granted for /usr/bin/env (the #! interpreter of @TOOLS@/envscript.sh)"}},
		{name: "control", props: `command: "@TOOLS@/status.sh", onlyif: "@TOOLS@/status.sh"`, ok: true},
	}
}

// evilSource is the LD_PRELOAD / LD_AUDIT payload: it creates a sentinel
// file as soon as it is loaded.
const evilSource = `#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void) { close(open("@SENT@/preload_ran", O_CREAT|O_WRONLY, 0644)); }
unsigned int la_version(unsigned int v) { return v; }
`

// execHostileSetup lays out dir: work/ (the vendor's, read and write),
// tools/ (the operator's programs: status.sh, a bash script that runs date
// through PATH; envscript.sh, "#!/usr/bin/env bash"; current, a deploy-style
// symlink into work/), sentinel/ (outside every grant), and the manifests.
func execHostileSetup(t *testing.T, dir string) (*strings.Replacer, []string) {
	t.Helper()
	work, tools, sent := filepath.Join(dir, "work"), filepath.Join(dir, "tools"), filepath.Join(dir, "sentinel")
	for _, d := range []string{work, tools, filepath.Join(work, "release"), filepath.Join(work, "bin"), filepath.Join(dir, "vendor")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sentinelTree(t, sent)
	resolve := func(p string) string {
		t.Helper()
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	echo, bash := resolve("/bin/echo"), resolve("/bin/bash")
	probeWasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", "probe", "probe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(probeWasm)
	r := strings.NewReplacer("@WORK@", work, "@TOOLS@", tools, "@SENT@", sent, "@ECHO@", echo, "@BASH@", bash,
		"@TOUCH@", resolve("/usr/bin/touch"), "@ID@", resolve("/usr/bin/id"), "@PROBE_SUM@", hex.EncodeToString(sum[:]))
	put := func(p, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(r.Replace(content)), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(tools, "status.sh"), "#!@BASH@\ndate >/dev/null\necho status ok\n", 0o755)
	put(filepath.Join(tools, "envscript.sh"), "#!/usr/bin/env bash\n/usr/bin/touch @SENT@/env_ran\n", 0o755)
	if err := os.Symlink(filepath.Join(work, "release"), filepath.Join(tools, "current")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vendor", "probe.wasm"), probeWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	// The LD_PRELOAD payload, when a C compiler is at hand; the refusal
	// does not depend on it (the rule is checked before anything runs).
	payload := filepath.Join(work, "evil.so")
	put(filepath.Join(work, "evil.c"), evilSource, 0o644)
	if cc, err := exec.LookPath("cc"); err == nil {
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", payload, filepath.Join(work, "evil.c")).CombinedOutput(); err != nil {
			t.Logf("cc: %v: %s", err, out)
		}
	}
	if _, err := os.Stat(payload); err != nil {
		put(payload, "not an ELF object: no C compiler\n", 0o644)
	}

	// The vendor writes its other payloads itself, with the file type; they
	// are there before the first run too, so --noop meets them.
	for _, f := range [][2]string{
		{"payload.sh", "/usr/bin/touch @SENT@/bash_env_ran\n"},
		{"bin/date", "#!/bin/sh\n/usr/bin/touch @SENT@/path_ran\n"},
		{"release/run", "#!/bin/sh\n/usr/bin/touch @SENT@/symlink_ran\n"},
	} {
		put(filepath.Join(work, f[0]), f[1], 0o755)
	}
	var b strings.Builder
	b.WriteString(r.Replace(`ccm:
  plugins:
    - {path: probe.wasm, sha256: "@PROBE_SUM@"}
  resources:
    - file:
        - @WORK@/payload.sh: {ensure: present, content: "/usr/bin/touch @SENT@/bash_env_ran\n", mode: "0755", owner: "@USER@", group: "@GROUP@"}
        - @WORK@/bin/date: {ensure: present, content: "#!/bin/sh\n/usr/bin/touch @SENT@/path_ran\n", mode: "0755", owner: "@USER@", group: "@GROUP@"}
        - @WORK@/release/run: {ensure: present, content: "#!/bin/sh\n/usr/bin/touch @SENT@/symlink_ran\n", mode: "0755", owner: "@USER@", group: "@GROUP@"}
`))
	for _, a := range execAttacks() {
		fmt.Fprintf(&b, "    - exec:\n        - %s: {%s}\n", a.name, r.Replace(a.props))
	}
	// A health check runs through the same exec path and rules.
	b.WriteString(r.Replace(`    - file:
        - @WORK@/checked: {ensure: present, content: "x\n", mode: "0644", owner: "@USER@", group: "@GROUP@", health_checks: [{name: hc, command: "@TOOLS@/current/run"}]}
`))
	// The third-party plugin: it declares command a guard and claims
	// "/usr/bin/id -u" a read-only probe; neither is the operator's word.
	b.WriteString(r.Replace(`    - probe:
        - thirdparty_guard:
            command: "@TOUCH@ @WORK@/guard_ran"
            calls: [{call: ccm_exec, request: {argv: ["@TOUCH@", "@WORK@/guard_ran"], probe: true}}]
        - thirdparty_probe:
            calls: [{call: ccm_exec, request: {argv: ["@ID@", "-u"], probe: true}}]
`))
	writeManifest(t, dir, "vendor/manifest.yaml", b.String())
	writeManifest(t, dir, "m.yaml", r.Replace(`
ccm:
  resources:
    - apply:
        - vendor/manifest.yaml:
            allow_apply: false
            grants:
              fs_read: ["@WORK@/**", "vendor/probe.wasm"]
              fs_write: ["@WORK@/**"]
              exec: ["@ECHO@", "@BASH@", "@TOOLS@/**", "@TOUCH@", "@ID@"]
              users: true
`))
	return r, []string{"preload_ran", "bash_env_ran", "bash_func_ran", "path_ran", "symlink_ran", "env_ran"}
}

// TestHostileExec runs the vendor manifest in --noop, then in apply: every
// attack fails its resource naming the refused variable or program, the
// control case runs, and the sentinel tree is unchanged after each run.
func TestHostileExec(t *testing.T) {
	dir := t.TempDir()
	r, sentinels := execHostileSetup(t, dir)
	sent := filepath.Join(dir, "sentinel")
	before := fstree.Describe(t, sent)
	ccmtest.Binary(t)
	for _, mode := range []string{"noop", "apply"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"m.yaml"}
			if mode == "noop" {
				args = append(args, "--noop")
			}
			out, res := applyJSON(t, dir, args...)
			if res.Code != 1 {
				t.Fatalf("exit %d, want 1\nstderr:\n%s", res.Code, res.Stderr)
			}
			if after := fstree.Describe(t, sent); after != before {
				t.Errorf("the sentinel tree outside the grant changed")
			}
			for _, f := range sentinels {
				if _, err := os.Lstat(filepath.Join(sent, f)); err == nil {
					t.Errorf("sentinel/%s exists: a payload ran", f)
				}
			}
			for _, a := range execAttacks() {
				e := out.event(t, "exec#"+a.name)
				msg := strings.Join(e.Error, "; ")
				t.Logf("%-24s %s", a.name, msg)
				if a.ok {
					if e.Failed {
						t.Errorf("exec#%s failed: %s", a.name, msg)
					}
					continue
				}
				if !e.Failed {
					t.Errorf("exec#%s did not fail", a.name)
				}
				for _, w := range a.want {
					if w = r.Replace(w); !strings.Contains(msg, w) {
						t.Errorf("exec#%s error %q\ndoes not contain %q", a.name, msg, w)
					}
				}
			}
			hc := strings.Join(out.event(t, "file#"+filepath.Join(dir, "work", "checked")).Error, "; ")
			t.Logf("%-24s %s", "health_check", hc)
			if want := r.Replace("health check hc: unknown: file#@WORK@/checked: ccm_exec: denied: exec not granted for @TOOLS@/current/run (resolved to @WORK@/release/run)"); !strings.Contains(hc, want) {
				t.Errorf("health check: %q\nwant %q", hc, want)
			}
			// The third-party plugin's calls: in noop both are refused (its
			// guard and its probe_exec claim are only its own word), and
			// nothing changed, not even in the vendor's own directory. In
			// apply the touch is an ordinary granted exec.
			if mode == "noop" {
				if _, err := os.Lstat(filepath.Join(dir, "work", "guard_ran")); err == nil {
					t.Errorf("work/guard_ran exists after --noop")
				}
				for ref, want := range map[string]string{
					"probe#thirdparty_guard": "noop mode runs only probes: the command is neither a built-in type's guard nor starts with one of the plugin's probe_exec entries",
					"probe#thirdparty_probe": "noop mode runs only probes: a third-party plugin's probe_exec needs a matching probe_exec entry in every grant of the chain",
				} {
					st, _ := json.Marshal(out.event(t, ref).Status)
					if !strings.Contains(string(st), want) {
						t.Errorf("%s: %s\nwant %q", ref, st, want)
					}
				}
			}
		})
	}
}

// TestHostileExecDescriptors: descriptors the ccm process inherited (here
// fd 9, open read-write on a sentinel file) never reach an exec child,
// which gets 0, 1 and 2 only. The child tries to write through fd 9 and
// lists its own descriptors.
func TestHostileExecDescriptors(t *testing.T) {
	dir := t.TempDir()
	sent := filepath.Join(dir, "sentinel")
	sentinelTree(t, sent)
	before := fstree.Describe(t, sent)
	f, err := os.OpenFile(filepath.Join(sent, "shadow"), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - exec:
        - fds:
            provider: shell
            command: "echo pwned >&9; ls -l /proc/self/fd/ > @DIR@/fds"
`)
	cmd := ccmtest.Command(t, dir, nil, "apply", "m.yaml")
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, f} // fd 9
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ccm apply: %v\n%s", err, out)
	}
	if after := fstree.Describe(t, sent); after != before {
		t.Errorf("the child wrote through an inherited descriptor")
	}
	listing, err := os.ReadFile(filepath.Join(dir, "fds"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("child's descriptors:\n%s", listing)
	for _, line := range strings.Split(strings.TrimSpace(string(listing)), "\n")[1:] { // after "total 0"
		fields := strings.Fields(line)
		i := slices.Index(fields, "->")
		if i < 1 {
			t.Fatalf("unexpected line %q", line)
		}
		fd, target := fields[i-1], fields[i+1]
		switch fd {
		case "0", "1", "2":
		case "3": // ls's own handle on the directory it lists
			if !strings.HasPrefix(target, "/proc/") {
				t.Errorf("fd 3 -> %s", target)
			}
		default:
			t.Errorf("the child holds fd %s -> %s", fd, target)
		}
	}
}
