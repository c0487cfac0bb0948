package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The built-ins (WithBuiltins) run without wazero's per-loop termination
// check (trusted.go); these tests pin what still stops them, and that every
// other module keeps the check.

// builtinHostile returns a host that serves the hostile module as if it
// were compiled into ccm, with cache as its compilation cache (and opts).
func builtinHostile(t *testing.T, cache string, l Limits, opts ...Option) *Host {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hostile.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(append([]Option{WithBuiltins(os.DirFS(dir)), WithCacheDir(cache), WithLimits(l)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// TestBuiltinStoppedAtHostCall: a built-in looping through host calls is
// stopped at its deadline by the host call's context check, as any plugin.
func TestBuiltinStoppedAtHostCall(t *testing.T) {
	t.Parallel()
	h := builtinHostile(t, testCacheDir(), Limits{CallTimeout: 300 * time.Millisecond, HostCalls: 1 << 40})
	warmUp(t, h)
	start := time.Now()
	_, err := attack(h, "hostcall_flood", map[string]any{"count": 1 << 40})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded the call_timeout limit of 300ms; the instance was discarded") {
		t.Fatalf("built-in flooding host calls: err = %v, want the call_timeout limit", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopping the built-in took %v", d)
	}
	if res, err := attack(h, "hostcall_flood", map[string]any{"count": 10}); err != nil || res.Error != "made 10 host calls, 0 refused" {
		t.Fatalf("next call: %+v, %v", res, err)
	}
}

// TestThirdPartyLoopInterruptedAfterBuiltin: the same bytes compiled as a
// built-in (no check) into a cache, then loaded as a third-party module from
// the same cache: the third party gets checked code and a pure loop is
// stopped at its deadline. This holds because wazero's key for compiled code
// includes whether the check was compiled in; it fails if that changes.
func TestThirdPartyLoopInterruptedAfterBuiltin(t *testing.T) {
	t.Parallel()
	cache := t.TempDir() // fresh: the built-in is compiled (and cached) first
	b := builtinHostile(t, cache, Limits{})
	if res, err := attack(b, "hostcall_flood", map[string]any{"count": 1}); err != nil || res.Error != "made 1 host calls, 0 refused" {
		t.Fatalf("built-in: %+v, %v", res, err)
	}
	_ = b.Close(context.Background())

	wasm, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for name, opt := range map[string]Option{
		"WithModules": WithModules(map[string][]byte{"hostile": wasm}),
		"WithFS":      WithFS(os.DirFS("../testdata/plugins/hostile")),
	} {
		// 1 s, not less: the warm-up's ccm_describe instantiates the
		// checked module under the same limit, which took over 300 ms under
		// -race on a loaded 2-core machine.
		h, err := New(opt, WithCacheDir(cache), WithLimits(Limits{CallTimeout: time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		warmUp(t, h)
		start := time.Now()
		_, err = attack(h, "infinite_loop", nil)
		_ = h.Close(context.Background())
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded the call_timeout limit of 1s") {
			t.Fatalf("%s: tight loop: err = %v, want the call_timeout limit", name, err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Fatalf("%s: stopping the loop took %v", name, d)
		}
	}
}

// warmUp compiles the module (under a deadline of its own, the compile is
// not part of a call) so that what a test times is the call alone.
func warmUp(t *testing.T, h *Host) {
	t.Helper()
	if res, err := attack(h, "hostcall_flood", map[string]any{"count": 1}); err != nil || res.Error != "made 1 host calls, 0 refused" {
		t.Fatalf("warm-up call: %+v, %v", res, err)
	}
}

// stuckHelperEnv makes TestBuiltinStuckWatchdog's child process run the
// stuck built-in.
const stuckHelperEnv = "CCM_TEST_STUCK_BUILTIN"

// TestBuiltinStuckWatchdog: a built-in in a pure guest loop cannot be
// interrupted; the watchdog ends the process (exit 70) with a bug report
// stuckGrace after the call's deadline, so a run never hangs. With one P
// (GOMAXPROCS=1) the spinning guest, which Go cannot preempt, leaves the
// watchdog goroutine no time to run: the OS timer backstop kills the
// process instead (SIGKILL). The loop runs in a child process.
func TestBuiltinStuckWatchdog(t *testing.T) {
	if os.Getenv(stuckHelperEnv) == "1" {
		h := builtinHostile(t, testCacheDir(), Limits{CallTimeout: 200 * time.Millisecond})
		warmUp(t, h) // compile before the single P is taken by the loop
		h.stuckGrace = 300 * time.Millisecond
		h.backstopAfter = 300 * time.Millisecond
		runtime.GC() // no collection due while the loop holds its P
		_, err := attack(h, "infinite_loop", nil)
		t.Fatalf("the stuck built-in returned: %v", err)
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		code int // -1: killed by a signal
		want string
	}{
		{"watchdog", nil, exitStuckCode,
			`ccm: BUG: the built-in plugin for type "hostile" is still running ccm_apply 300ms after its call ended (exceeded the call_timeout limit of 200ms)`},
		{"backstop with GOMAXPROCS=1", []string{"GOMAXPROCS=1"}, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBuiltinStuckWatchdog$", "-test.count=1")
			cmd.Env = append(append(os.Environ(), stuckHelperEnv+"=1"), tc.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("child: err = %v, want exit status %d; output:\n%.4000s", err, tc.code, out)
			}
			if tc.code == -1 && ee.String() != "signal: killed" {
				t.Fatalf("child: %v, want SIGKILL", ee)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("child output lacks %q:\n%.4000s", tc.want, out)
			}
		})
	}
}
