package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// The cold start (host/cold.go, docs/performance.md "Cold start"), end to
// end with the real binary: a first small run interprets the file plugin
// and leaves its compile to a detached `ccm plugin compile --background`,
// which fills the cache for the next run.

const interpretedLine = "ccm: debug: built-in plugins interpreted in this run, not compiled yet: file"

// coldCache is an empty cache directory whose background compile, if a run
// starts one, is waited for before the directory is removed.
func coldCache(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := host.WaitBackgroundCompile(ctx, cache); err != nil {
			t.Errorf("waiting for the background compile: %v", err)
		}
	})
	return cache
}

// seededCache is coldCache holding the wazero-* directories of seed (the
// file plugin's compiled code) but no marker: a run still counts the
// plugin as not compiled, and its compile is a cache hit.
func seededCache(t *testing.T, seed string) string {
	t.Helper()
	cache := coldCache(t)
	subs, _ := filepath.Glob(filepath.Join(seed, "wazero-*"))
	for _, sub := range subs {
		if err := os.CopyFS(filepath.Join(cache, filepath.Base(sub)), os.DirFS(sub)); err != nil {
			t.Fatal(err)
		}
	}
	return cache
}

func markers(t *testing.T, cache string) int {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(cache, "ccm-compiled"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(es)
}

// TestColdStartSmallRun: `ccm ensure file` with an empty cache is
// interpreted and correct; its background compile fills the cache and
// marks the module; the next run is not interpreted. `ccm plugin compile`
// compiles for image builds.
func TestColdStartSmallRun(t *testing.T) {
	t.Parallel()
	cache := coldCache(t)
	dir := e2eDir(t)
	env := []string{"CCM_CACHE_DIR=" + cache, "CCM_BACKGROUND_COMPILE=1"}
	target := filepath.Join(dir, "f")

	res := ccmtest.Run(t, dir, env, "--debug", "ensure", "file", target, "--content", "hi")
	if res.Code != 0 || !strings.Contains(res.Stderr, interpretedLine) {
		t.Fatalf("cold run: exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", res.Code, interpretedLine, res.Stdout, res.Stderr)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hi" {
		t.Fatalf("cold run wrote %q, %v", b, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := host.WaitBackgroundCompile(ctx, cache); err != nil {
		t.Fatal(err)
	}
	if n := markers(t, cache); n != 1 {
		t.Fatalf("after the background compile: %d markers, want 1", n)
	}

	res = ccmtest.Run(t, dir, env, "--debug", "ensure", "file", target, "--content", "hi2")
	if res.Code != 0 || strings.Contains(res.Stderr, "interpreted") {
		t.Fatalf("warm run: exit %d, want 0 and not interpreted\nstderr:\n%s", res.Code, res.Stderr)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hi2" {
		t.Fatalf("warm run wrote %q, %v", b, err)
	}

	res = ccmtest.Run(t, dir, env, "plugin", "compile", "file")
	if res.Code != 0 || !strings.HasPrefix(res.Stdout, "file: compiled in ") {
		t.Fatalf("ccm plugin compile file: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res = ccmtest.Run(t, dir, env, "plugin", "compile", "nosuch")
	if res.Code == 0 || !strings.Contains(res.Stderr, `"nosuch"`) {
		t.Fatalf("ccm plugin compile nosuch: exit %d\nstderr:\n%s", res.Code, res.Stderr)
	}
}

// TestColdStartCompiles: a run with more file resources than the cold
// limit (100 on 2 cores), and a small run with CCM_BACKGROUND_COMPILE=0,
// compile before they run, as ccm always did, and mark the module: no
// interpreter, no background process. (The cache holds the compiled code
// already, without a marker, so that the test does not pay two cold
// compiles; TestColdStartSmallRun starts from an empty one.)
func TestColdStartCompiles(t *testing.T) {
	t.Parallel()
	seed := t.TempDir()
	if res := ccmtest.Run(t, seed, []string{"CCM_CACHE_DIR=" + seed}, "plugin", "compile", "file"); res.Code != 0 {
		t.Fatalf("ccm plugin compile file: exit %d\n%s", res.Code, res.Stderr)
	}
	for _, tc := range []struct {
		name  string
		files int
		env   []string
	}{
		{"big run", 101, []string{"CCM_BACKGROUND_COMPILE=1"}},
		{"opt-out", 1, []string{"CCM_BACKGROUND_COMPILE=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache := seededCache(t, seed)
			dir := e2eDir(t)
			var sb strings.Builder
			sb.WriteString("ccm:\n  resources:\n    - file:\n")
			for i := range tc.files {
				fmt.Fprintf(&sb, "        - @DIR@/f%d: {ensure: present, owner: @USER@, group: @GROUP@, mode: \"0644\", content: \"%d\"}\n", i, i)
			}
			m := writeManifest(t, dir, "m.yaml", sb.String())
			env := append([]string{"CCM_CACHE_DIR=" + cache, "GOMAXPROCS=2"}, tc.env...)
			res := ccmtest.Run(t, dir, env, "--debug", "apply", m, "--no-report")
			if res.Code != 0 || strings.Contains(res.Stderr, "interpreted") {
				t.Fatalf("exit %d, want 0 and not interpreted\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			if n := markers(t, cache); n != 1 {
				t.Fatalf("%d markers right after the run, want 1", n)
			}
			if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d", tc.files-1))); err != nil || string(b) != fmt.Sprint(tc.files-1) {
				t.Fatalf("last file: %q, %v", b, err)
			}
		})
	}
}
