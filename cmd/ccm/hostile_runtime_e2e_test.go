package main

// Exhaustion and signals (docs/security.md, "Exhaustion and signals"),
// through the real binary as root: a vendor manifest applied with a narrow
// grant (and, where the attack needs it, allow_apply) tries to exhaust the
// host's memory, time and terminal; the run ends within its limits with a
// message naming the resource, the limit and the rule, and a sentinel tree
// outside the grant is unchanged. Then SIGINT and SIGTERM at the points a
// run can block: a plugin call, an exec, a read of a FIFO.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// runtimeSetup lays out dir like the hostile suite: work/ (granted),
// sentinel/ (outside every grant) and vendor/hostile.wasm, and returns
// the replacer for manifests (@WORK@, @SENT@, @VENDOR@, @HOSTILE_SUM@,
// @USER@, @GROUP@).
func runtimeSetup(t *testing.T, dir string) *strings.Replacer {
	t.Helper()
	work, sent, vendor := filepath.Join(dir, "work"), filepath.Join(dir, "sentinel"), filepath.Join(dir, "vendor")
	for _, d := range []string{work, vendor} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sentinelTree(t, sent)
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", "hostile", "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vendor, "hostile.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	u, g := me(t)
	return strings.NewReplacer("@WORK@", work, "@SENT@", sent, "@VENDOR@", vendor, "@HOSTILE_SUM@", hex.EncodeToString(sum[:]), "@USER@", u, "@GROUP@", g)
}

func writeRuntimeManifest(t *testing.T, r *strings.Replacer, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(r.Replace(body)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// vendorApply is the root's apply of one vendor manifest: a narrow grant,
// no nested applies unless allowApply.
const vendorApply = `
        - vendor/%s:
            allow_apply: %v
            grants:
              fs_read: ["@WORK@/**", "@VENDOR@/**"]
              fs_write: ["@WORK@/**"]
              users: true
            limits: {call_timeout: %s}
`

func TestHostileRuntimeExhaustion(t *testing.T) {
	dir := t.TempDir()
	r := runtimeSetup(t, dir)
	var root strings.Builder
	root.WriteString(`
ccm:
  resources:
    - file:
        - @WORK@/before: {ensure: present, content: "before\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
    - apply:`)
	for _, m := range []struct {
		name  string
		apply bool
	}{{"cycle.yaml", true}, {"bomb.yaml", false}, {"jetbomb.yaml", false}, {"noisy.yaml", false}} {
		fmt.Fprintf(&root, vendorApply, m.name, m.apply, "10s")
	}
	root.WriteString(`
    - file:
        - @WORK@/after: {ensure: present, content: "after\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
`)
	writeRuntimeManifest(t, r, dir, "m.yaml", root.String())
	// Applies itself under four spellings and a symlink to itself: 5^10
	// manifests by depth alone. (A hard link to a manifest is refused
	// before the cycle check in a confined scope, by the hard-link rule of
	// the filesystem; runtime/engine's TestApplyCycleAnySpelling covers
	// hard links to a manifest in an unconfined scope.)
	writeRuntimeManifest(t, r, dir, "vendor/cycle.yaml", `
ccm:
  resources:
    - apply:
        - cycle.yaml: {}
        - ./cycle.yaml: {}
        - ../vendor/cycle.yaml: {}
        - @VENDOR@/cycle.yaml: {}
        - link.yaml: {}
`)
	if err := os.Symlink("cycle.yaml", filepath.Join(dir, "vendor", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	// Doubling a string forty times is a terabyte; the budget stops it at
	// 16 MiB.
	writeRuntimeManifest(t, r, dir, "vendor/bomb.yaml", `
ccm:
  resources:
    - file:
        - @WORK@/bomb: {ensure: present, content: '{{ reduce(1..40, #acc + #acc, "x") }}', mode: "0644", owner: "@USER@", group: "@GROUP@"}
`)
	writeRuntimeManifest(t, r, dir, "vendor/jetbomb.yaml", `
ccm:
  resources:
    - file:
        - @WORK@/jetbomb: {ensure: present, content: '{{ jet("[[ range i := ints(0, 1000000000) ]][[ end ]]") }}', mode: "0644", owner: "@USER@", group: "@GROUP@"}
        - @WORK@/jetyield: {ensure: present, content: '{{ jet("[[ block b() ]]x[[ yield b() ]][[ end ]]") }}', mode: "0644", owner: "@USER@", group: "@GROUP@"}
`)
	writeRuntimeManifest(t, r, dir, "vendor/noisy.yaml", `
ccm:
  plugins:
    - {path: hostile.wasm, sha256: "@HOSTILE_SUM@"}
  resources:
    - hostile:
        - log_flood: {attack: log_flood, count: 4000}
        - control_chars: {attack: control_chars}
`)
	sentinel := filepath.Join(dir, "sentinel")
	before := fstree.Describe(t, sentinel)

	ccmtest.Binary(t)
	start := time.Now()
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	took := time.Since(start)
	t.Logf("ccm apply took %v; stdout %d bytes, stderr %d bytes\n%s", took, len(res.Stdout), len(res.Stderr), res.Stdout)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%.4000s\nstderr:\n%.4000s", res.Code, res.Stdout, res.Stderr)
	}
	if after := fstree.Describe(t, sentinel); after != before {
		t.Errorf("the sentinel tree outside the grant changed")
	}
	if took > 30*time.Second {
		t.Errorf("the run took %v", took)
	}
	out := res.Stdout + res.Stderr
	if len(out) > 1<<20+64<<10 {
		t.Errorf("the run printed %d bytes; plugin logs are capped at 1 MiB per call", len(out))
	}
	if strings.ContainsAny(out, "\x1b\x07\r\u009b\u202e") {
		t.Errorf("a control character reached the terminal:\n%q", lineWith(out, "control_chars"))
	}
	for _, want := range []string{
		// the cycle, whatever the spelling, at once
		"apply#cycle.yaml failed",
		"apply#./cycle.yaml failed",
		"apply#link.yaml failed",
		"apply cycle: vendor/cycle.yaml is already being applied (vendor/cycle.yaml applies vendor/cycle.yaml)",
		"apply cycle: vendor/link.yaml is already being applied (vendor/cycle.yaml applies vendor/link.yaml)",
		// the template budgets, named, with the resource
		"file#" + filepath.Join(dir, "work", "bomb") + " failed",
		`content: expression \"reduce(1..40, #acc + #acc, \\\"x\\\")\": template budget exceeded: string concatenation (+) would build 32.0 MiB, over the 16 MiB one template value may hold (max_value_bytes)`,
		"file#" + filepath.Join(dir, "work", "jetbomb") + " failed",
		"jet inline.jet: template budget exceeded: over 1000000 loop iterations in one Jet template (max_jet_iterations)",
		"file#" + filepath.Join(dir, "work", "jetyield") + " failed",
		"template budget exceeded: Jet blocks and includes nested past 4000 stack frames (max_jet_depth)",
		// the log cap, once
		"hostile#log_flood logged more than 1 MiB in one call (log_bytes limit); the rest of its log lines are dropped",
		"hostile#log_flood changed",
		// escaped plugin text
		`hostile#control_chars: log \x1b[2J\x1b]0;pwned\x07\x1b[H\x1b[32mINFO  all good\x1b[0m\x0d\u009b31m\u202e`,
		`errors="error \\x1b[2J\\x1b]0;pwned\\x07`,
	} {
		if want = r.Replace(want); !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(out, "log_bytes limit"); n != 1 {
		t.Errorf("the log cap was announced %d times", n)
	}
	if n := len(out) - len(strings.Join(linesWithout(out, "flood flood"), "\n")); n > 1<<20+16<<10 {
		t.Errorf("%d bytes of flood lines reached the terminal", n)
	}
	for _, f := range []string{"before", "after"} {
		if _, err := os.Stat(filepath.Join(dir, "work", f)); err != nil {
			t.Errorf("work/%s: %v", f, err)
		}
	}
	for _, f := range []string{"bomb", "jetbomb", "jetyield"} {
		if _, err := os.Stat(filepath.Join(dir, "work", f)); err == nil {
			t.Errorf("work/%s was written", f)
		}
	}
}

func linesWithout(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// ccmProcess is a ccm run the test can signal while it runs.
type ccmProcess struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	code   int
	ended  time.Time
}

func startCCM(t *testing.T, dir string, args ...string) *ccmProcess {
	t.Helper()
	cmd := exec.Command(ccmtest.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"CCM_CACHE_DIR=" + filepath.Join(os.TempDir(), "ccmtest-cache"),
		"CCM_BACKGROUND_COMPILE=0",
		"CCM_PLUGIN_PATH=",
		"NO_COLOR=1",
	}
	p := &ccmProcess{cmd: cmd, done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.stdout.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		err := cmd.Wait()
		p.ended = time.Now()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *ccmProcess) output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

// waitFor waits until stdout holds s (or, for "proc:X", until a process
// with X in its command line runs); false if ccm ended or time ran out.
func (p *ccmProcess) waitFor(t *testing.T, s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if proc, ok := strings.CutPrefix(s, "proc:"); ok {
			if len(processesWith(t, proc)) > 0 {
				return true
			}
		} else if out, _ := p.output(); strings.Contains(out, s) {
			return true
		}
		select {
		case <-p.done:
			out, _ := p.output()
			return strings.Contains(out, s)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// signal sends sig and returns how long ccm took to exit after it.
func (p *ccmProcess) signal(t *testing.T, sig syscall.Signal, limit time.Duration) time.Duration {
	t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		return p.ended.Sub(sent)
	case <-time.After(limit):
		out, errOut := p.output()
		t.Fatalf("ccm still running %v after %v\nstdout:\n%s\nstderr:\n%s", limit, sig, out, errOut)
	}
	return 0
}

// processesWith lists the pids whose command line contains s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func TestSignalsEndTheRun(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
		// the resource the run blocks in, between file#before and file#after
		block   string
		args    []string          // more ccm apply arguments
		files   map[string]string // more vendor files; "" content = a FIFO
		wait    string            // stdout line that says the run reached the block, "proc:" a process's command line; "" = none
		limit   time.Duration
		code    int
		message []string
		second  bool // send a second signal after 100 ms
	}{
		{
			name: "plugin infinite loop, SIGINT", sig: syscall.SIGINT, code: 130, limit: 2 * time.Second,
			block: `
    - apply:` + fmt.Sprintf(vendorApply, "loop.yaml", false, "60s"),
			files: map[string]string{"vendor/loop.yaml": `
ccm:
  plugins:
    - {path: hostile.wasm, sha256: "@HOSTILE_SUM@"}
  resources:
    - hostile:
        - infinite_loop: {attack: spin_logged}
`},
			wait:    "hostile#infinite_loop: spinning",
			message: []string{"hostile#infinite_loop failed", "ccm_apply: interrupted by SIGINT", "ccm: SIGINT: stopping the run at the current resource", "file#@WORK@/after skipped", "not applied: the run was interrupted by SIGINT", "ccm: error: run interrupted by SIGINT: the resource running then was stopped, 1 resources were not started"},
		},
		{
			name: "long exec, SIGTERM", sig: syscall.SIGTERM, code: 143, limit: 2 * time.Second,
			block: `
    - exec:
        - /bin/sleep 299.731: {}`,
			wait:    "proc:sleep 299.731",
			message: []string{"exec#/bin/sleep 299.731 failed", "interrupted by SIGTERM", "file#@WORK@/after skipped"},
		},
		{
			// The host refuses to read a manifest, template or include that
			// is not a regular file; what the operator names can still be
			// a FIFO nobody writes to, and open blocks in the kernel.
			name: "blocked open of a FIFO while loading, SIGINT", sig: syscall.SIGINT, code: 130, limit: 5 * time.Second,
			args:    []string{"--facts", "facts.fifo"},
			files:   map[string]string{"facts.fifo": ""},
			message: []string{"ccm: SIGINT: stopping the run", "ccm: still running 3s after SIGINT; exiting now, without cleanup"},
		},
		{
			name: "second signal exits at once", sig: syscall.SIGINT, code: 130, limit: time.Second, second: true,
			args:    []string{"--facts", "facts.fifo"},
			files:   map[string]string{"facts.fifo": ""},
			message: []string{"ccm: SIGINT: stopping the run", "ccm: SIGINT again: exiting now"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runtimeSetup(t, dir)
			writeRuntimeManifest(t, r, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - @WORK@/before: {ensure: present, content: "before\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}`+tt.block+`
    - file:
        - @WORK@/after: {ensure: present, content: "after\n", mode: "0644", owner: "@USER@", group: "@GROUP@"}
`)
			for name, content := range tt.files {
				if content == "" {
					if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeRuntimeManifest(t, r, dir, name, content)
			}
			sentinel := filepath.Join(dir, "sentinel")
			before := fstree.Describe(t, sentinel)

			p := startCCM(t, dir, append([]string{"apply", "m.yaml"}, tt.args...)...)
			if tt.wait != "" && !p.waitFor(t, r.Replace(tt.wait), 20*time.Second) {
				out, errOut := p.output()
				t.Fatalf("ccm did not reach %q\nstdout:\n%s\nstderr:\n%s", tt.wait, out, errOut)
			}
			time.Sleep(100 * time.Millisecond) // well into the loop, the exec, the open
			select {
			case <-p.done:
				out, errOut := p.output()
				t.Fatalf("ccm ended before the signal (exit %d)\nstdout:\n%s\nstderr:\n%s", p.code, out, errOut)
			default:
			}
			if tt.second {
				go func() {
					time.Sleep(100 * time.Millisecond)
					_ = p.cmd.Process.Signal(tt.sig)
				}()
			}
			took := p.signal(t, tt.sig, tt.limit)
			out, errOut := p.output()
			t.Logf("exit %d, %v after %v", p.code, took, tt.sig)
			if p.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", p.code, tt.code, out, errOut)
			}
			for _, m := range tt.message {
				if m = r.Replace(m); !strings.Contains(out+errOut, m) {
					t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", m, out, errOut)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "work", "after")); err == nil {
				t.Error("work/after was written after the signal")
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "work"))
			for _, e := range entries {
				if e.Name() != "before" {
					t.Errorf("work/%s left behind", e.Name())
				}
			}
			if after := fstree.Describe(t, sentinel); after != before {
				t.Error("the sentinel tree changed")
			}
			if strings.Contains(tt.block, "sleep") {
				time.Sleep(100 * time.Millisecond)
				if pids := processesWith(t, "sleep 299.731"); len(pids) > 0 {
					t.Errorf("sleep survived ccm: pids %v", pids)
				}
			}
		})
	}
}
