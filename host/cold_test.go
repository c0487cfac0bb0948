package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// Cold start (cold.go): a built-in not compiled yet, in a run that
// announces few resources of it, is interpreted; a marker says it is
// compiled. These tests use the hostile module served as a built-in.

// coldRecorder is a ColdStart.Background that records its calls and checks
// that it was handed the held compile lock.
type coldRecorder struct {
	t     *testing.T
	mu    sync.Mutex
	calls [][]string
}

func (r *coldRecorder) background(types []string, lock *os.File) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, slices.Clone(types))
	if lock == nil {
		r.t.Error("Background got no lock file")
	} else if other, err := tryCompileLock(filepath.Dir(lock.Name())); err != nil || other != nil {
		r.t.Errorf("the compile lock is not held while Background runs (%v)", err)
		if other != nil {
			other.Close()
		}
	}
	return nil
}

func (r *coldRecorder) got() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// coldHostile is builtinHostile with a cold start allowing max resources.
func coldHostile(t *testing.T, cache string, max int, rec *coldRecorder, l Limits) *Host {
	t.Helper()
	cold := ColdStart{MaxResources: max}
	if rec != nil {
		cold.Background = rec.background
	}
	return builtinHostile(t, cache, l, WithColdStart(cold))
}

// preloadN announces n hostile resources.
func preloadN(t *testing.T, h *Host, n int) {
	t.Helper()
	if err := h.Preload(context.Background(), trust.Caller{}, slices.Repeat([]string{"hostile"}, n)); err != nil {
		t.Fatalf("Preload of %d: %v", n, err)
	}
}

// cacheEntries lists wazero's compiled entries under dir.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	subs, _ := filepath.Glob(filepath.Join(dir, "wazero-*"))
	for _, sub := range subs {
		es, _ := os.ReadDir(sub)
		for _, e := range es {
			if isCacheEntryName(e.Name()) && !strings.HasSuffix(e.Name(), ".tmp") {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// compiledOnce compiles the hostile module as a built-in into the shared
// test cache, once per test binary.
var compiledOnce sync.Once

// compiledCache returns a new cache directory holding the hostile
// built-in's compiled code (copied from the shared test cache, so no test
// pays a cold compile) and no marker.
func compiledCache(t *testing.T) string {
	t.Helper()
	compiledOnce.Do(func() {
		h := builtinHostile(t, testCacheDir(), Limits{})
		warmUp(t, h)
	})
	dst := t.TempDir()
	subs, _ := filepath.Glob(filepath.Join(testCacheDir(), "wazero-*"))
	for _, sub := range subs {
		if err := os.CopyFS(filepath.Join(dst, filepath.Base(sub)), os.DirFS(sub)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func hostileSum(t *testing.T) string {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	return moduleSum(wasm)
}

// TestColdSmallRunInterpreted: an empty cache and a run of 3 resources
// (at most 5): the built-in is interpreted, runs correctly, nothing is
// compiled into the cache, and one background compile is asked for, of
// that type, holding the lock; a second Preload asks for no second one.
func TestColdSmallRunInterpreted(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	rec := &coldRecorder{t: t}
	h := coldHostile(t, cache, 5, rec, Limits{})
	preloadN(t, h, 3)
	if !h.interpreted("hostile") {
		t.Fatal("a cold run of 3 resources (max 5) was not interpreted")
	}
	if res, err := attack(h, "hostcall_flood", map[string]any{"count": 3}); err != nil || res.Error != "made 3 host calls, 0 refused" {
		t.Fatalf("interpreted call: %+v, %v", res, err)
	}
	if got := rec.got(); !slices.EqualFunc(got, [][]string{{"hostile"}}, slices.Equal) {
		t.Fatalf("background compiles = %v, want one of [hostile]", got)
	}
	if e := cacheEntries(t, cache); len(e) != 0 {
		t.Fatalf("an interpreted run wrote cache entries %v", e)
	}
	if h.compiledMarked(hostileSum(t), false) {
		t.Fatal("an interpreted run wrote a compiled marker")
	}
	preloadN(t, h, 1) // 4 in all, still interpreted, no second background compile
	if !h.interpreted("hostile") || len(rec.got()) != 1 {
		t.Fatalf("second small Preload: interpreted %v, background calls %v", h.interpreted("hostile"), rec.got())
	}
}

// TestColdBackgroundFillsCache: what the background compile does (Compile)
// leaves compiled code and a marker; the next cold-start host loads the
// module compiled and starts no background compile. A host that is
// running interpreted switches to compiled code at its next Preload once
// the marker is there.
func TestColdBackgroundFillsCache(t *testing.T) {
	t.Parallel()
	cache := compiledCache(t) // entries there, no marker: still "not compiled"
	rec := &coldRecorder{t: t}
	running := coldHostile(t, cache, 5, rec, Limits{})
	preloadN(t, running, 1)
	if !running.interpreted("hostile") {
		t.Fatal("not interpreted")
	}

	bg := coldHostile(t, cache, 0, nil, Limits{})
	if err := bg.Compile(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !bg.compiledMarked(hostileSum(t), false) || len(cacheEntries(t, cache)) == 0 {
		t.Fatalf("Compile left marker %v, entries %v", bg.compiledMarked(hostileSum(t), false), cacheEntries(t, cache))
	}

	rec2 := &coldRecorder{t: t}
	next := coldHostile(t, cache, 5, rec2, Limits{})
	preloadN(t, next, 1)
	if next.interpreted("hostile") || len(rec2.got()) != 0 {
		t.Fatalf("after the compile: interpreted %v, background calls %v", next.interpreted("hostile"), rec2.got())
	}
	warmUp(t, next)

	preloadN(t, running, 1)
	if running.interpreted("hostile") {
		t.Fatal("the running host did not switch to compiled code once the marker appeared")
	}
	warmUp(t, running)
	if len(rec.got()) != 1 {
		t.Fatalf("background calls = %v, want 1", rec.got())
	}
}

// TestColdBigRunCompiles: a run announcing more than MaxResources compiles
// as before (and marks it); announcements past the maximum over a host's
// life (child manifests, a pipe) switch an interpreted plugin to compiled
// code; a host without a cold start (MaxResources 0, the opt-out) always
// compiles.
func TestColdBigRunCompiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		max   int
		loads []int
	}{
		{"one big run", 5, []int{6}},
		{"small runs adding up", 5, []int{3, 3}},
		{"no cold start", 0, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache := compiledCache(t)
			rec := &coldRecorder{t: t}
			h := coldHostile(t, cache, tc.max, rec, Limits{})
			for _, n := range tc.loads {
				preloadN(t, h, n)
			}
			if h.interpreted("hostile") {
				t.Fatal("interpreted")
			}
			warmUp(t, h)
			if !h.compiledMarked(hostileSum(t), false) || len(cacheEntries(t, cache)) == 0 {
				t.Fatal("compiled without a marker or cache entry")
			}
			if want := min(1, len(tc.loads)-1); len(rec.got()) != want {
				t.Fatalf("background calls %v, want %d", rec.got(), want)
			}
		})
	}
}

// TestColdMarker: a marker that does not hold what it should (corrupt,
// or another module's) reads as missing: the module is interpreted. A
// valid marker is trusted whether or not its cache entries are still there
// (removed by hand): the run compiles, as every run did before, which with
// the entries gone is a cold compile. wipeCache removes the markers with
// the entries.
func TestColdMarker(t *testing.T) {
	t.Parallel()
	sum := hostileSum(t)

	t.Run("corrupt", func(t *testing.T) {
		t.Parallel()
		cache := compiledCache(t)
		h := coldHostile(t, cache, 5, nil, Limits{})
		path := h.markerPath(markerContent(sum, false))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, content := range []string{"", "garbage", markerContent(sum, true), strings.Replace(markerContent(sum, false), "wazero ", "wazero v0.0.1-", 1)} {
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if h.compiledMarked(sum, false) {
				t.Fatalf("marker %q accepted", content)
			}
		}
		preloadN(t, h, 1)
		if !h.interpreted("hostile") {
			t.Fatal("a corrupt marker was trusted")
		}
		warmUp(t, h)
	})

	t.Run("stale", func(t *testing.T) {
		t.Parallel()
		cache := compiledCache(t)
		c := coldHostile(t, cache, 0, nil, Limits{})
		if err := c.Compile(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		// The entries gone, the marker still there: the run compiles (a
		// cold compile here would take minutes under -race, so the entries
		// are put back before the load, which then compiles from them).
		aside := t.TempDir()
		subs, _ := filepath.Glob(filepath.Join(cache, "wazero-*"))
		for _, s := range subs {
			if err := os.Rename(s, filepath.Join(aside, filepath.Base(s))); err != nil {
				t.Fatal(err)
			}
		}
		h := coldHostile(t, cache, 5, nil, Limits{})
		if !h.compiledMarked(sum, false) {
			t.Fatal("the marker is not read as compiled")
		}
		for _, s := range subs {
			_ = os.Remove(s) // New made it again, empty
			if err := os.Rename(filepath.Join(aside, filepath.Base(s)), s); err != nil {
				t.Fatal(err)
			}
		}
		preloadN(t, h, 1)
		if h.interpreted("hostile") {
			t.Fatal("interpreted with a marker present")
		}
		warmUp(t, h)
		if err := wipeCache(cache); err != nil {
			t.Fatal(err)
		}
		if h.compiledMarked(sum, false) || len(cacheEntries(t, cache)) != 0 {
			t.Fatal("wipeCache left the marker or entries")
		}
	})
}

// TestColdThirdPartyCompiled: a module with a built-in's bytes given as a
// third-party module (WithFS) is never interpreted: always compiled, with
// the termination check, so a tight loop is stopped at its deadline.
func TestColdThirdPartyCompiled(t *testing.T) {
	t.Parallel()
	h, err := New(WithFS(os.DirFS("../testdata/plugins/hostile")), WithCacheDir(testCacheDir()),
		WithLimits(Limits{CallTimeout: time.Second}), WithColdStart(ColdStart{MaxResources: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	preloadN(t, h, 1)
	if h.interpreted("hostile") {
		t.Fatal("a third-party module was interpreted")
	}
	warmUp(t, h)
	if _, err := attack(h, "infinite_loop", nil); !errors.Is(err, ErrLimit) {
		t.Fatalf("tight loop: err = %v, want the call_timeout limit", err)
	}
}

// TestColdInterpretedStoppedAtHostCall: an interpreted built-in looping
// through host calls is stopped at its deadline, as a compiled one.
func TestColdInterpretedStoppedAtHostCall(t *testing.T) {
	t.Parallel()
	h := coldHostile(t, t.TempDir(), 5, nil, Limits{CallTimeout: 2 * time.Second, HostCalls: 1 << 40})
	preloadN(t, h, 1)
	if !h.interpreted("hostile") {
		t.Fatal("not interpreted")
	}
	warmUp(t, h)
	start := time.Now()
	_, err := attack(h, "hostcall_flood", map[string]any{"count": 1 << 40})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded the call_timeout limit of 2s") {
		t.Fatalf("interpreted built-in flooding host calls: err = %v, want the call_timeout limit", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopping it took %v", d)
	}
}

// stuckInterpretedEnv makes TestColdInterpretedStuckWatchdog's child run
// the stuck interpreted built-in.
const stuckInterpretedEnv = "CCM_TEST_STUCK_INTERPRETED"

// TestColdInterpretedStuckWatchdog: an interpreted built-in in a pure guest
// loop (no termination check, as compiled) is ended by the watchdog, exit
// 70 with the bug report. The interpreter is Go code, which Go preempts,
// so the watchdog runs even with GOMAXPROCS=1 (the backstop, set far
// later here, is not needed).
func TestColdInterpretedStuckWatchdog(t *testing.T) {
	if os.Getenv(stuckInterpretedEnv) == "1" {
		h := coldHostile(t, t.TempDir(), 5, nil, Limits{})
		preloadN(t, h, 1) // describe, interpreted, under the default limit
		if !h.interpreted("hostile") {
			t.Fatal("not interpreted")
		}
		h.limits.CallTimeout = 500 * time.Millisecond
		h.stuckGrace = 300 * time.Millisecond
		h.backstopAfter = 20 * time.Second
		_, err := attack(h, "infinite_loop", nil)
		t.Fatalf("the stuck built-in returned: %v", err)
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"watchdog", nil},
		{"watchdog with GOMAXPROCS=1", []string{"GOMAXPROCS=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestColdInterpretedStuckWatchdog$", "-test.count=1")
			cmd.Env = append(append(os.Environ(), stuckInterpretedEnv+"=1"), tc.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitStuckCode {
				t.Fatalf("child: err = %v, want exit status %d; output:\n%.4000s", err, exitStuckCode, out)
			}
			want := `ccm: BUG: the built-in plugin for type "hostile" is still running ccm_apply 300ms after its call ended (exceeded the call_timeout limit of 500ms)`
			if !strings.Contains(string(out), want) {
				t.Fatalf("child output lacks %q:\n%.4000s", want, out)
			}
		})
	}
}
