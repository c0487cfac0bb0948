package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// Whole-process latency of the shapes shell scripts use most, each op one
// run of the real ccm binary (docs/performance.md has the side-by-side
// numbers, internal/benchapply the tool that measures them against CCM):
//
//	go test -run '^$' -bench 'Latency' -benchtime 20x ./cmd/ccm/

// BenchmarkLatencyEnsureFile: `ccm ensure file` of a stable file, warm
// compilation cache.
func BenchmarkLatencyEnsureFile(b *testing.B) {
	dir := b.TempDir()
	target := filepath.Join(dir, "f")
	args := []string{"ensure", "file", target, "--content", "hello", "--mode", "0644"}
	latencyRun(b, dir, nil, args) // create it, warm the cache
	for b.Loop() {
		latencyRun(b, dir, nil, args)
	}
}

// BenchmarkLatencyApplyOne: `ccm apply` of a stable 1-resource manifest,
// warm compilation cache.
func BenchmarkLatencyApplyOne(b *testing.B) {
	dir := b.TempDir()
	m := latencyManifest(b, dir)
	latencyRun(b, dir, nil, []string{"apply", m})
	for b.Loop() {
		latencyRun(b, dir, nil, []string{"apply", m})
	}
}

// BenchmarkLatencyColdStart: the first `ccm apply` of one file with an
// empty compilation cache, as a user gets it: the file plugin interpreted,
// its compile started in the background (waited for outside the timer).
// At most 10 ops: each compiles the file plugin.
func BenchmarkLatencyColdStart(b *testing.B) {
	if b.N > 10 {
		b.Skip("each op compiles the file plugin; run with -benchtime 10x or less")
	}
	dir := b.TempDir()
	m := latencyManifest(b, dir)
	ccmtest.Binary(b) // build outside the timed loop
	i := 0
	for b.Loop() {
		b.StopTimer()
		cache := filepath.Join(dir, fmt.Sprintf("cache%d", i))
		i++
		_ = os.Remove(filepath.Join(dir, "f"))
		b.StartTimer()
		latencyRun(b, dir, []string{"CCM_CACHE_DIR=" + cache, "CCM_BACKGROUND_COMPILE=1"}, []string{"apply", m})
		b.StopTimer()
		if err := host.WaitBackgroundCompile(b.Context(), cache); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func latencyManifest(b *testing.B, dir string) string {
	b.Helper()
	u, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		b.Fatal(err)
	}
	m := filepath.Join(dir, "m.yaml")
	src := fmt.Sprintf("ccm:\n  resources:\n    - file:\n        - %s/f: {ensure: present, owner: %s, group: %s, content: hello, mode: \"0644\"}\n", dir, u.Username, g.Name)
	if err := os.WriteFile(m, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return m
}

func latencyRun(b *testing.B, dir string, env, args []string) {
	b.Helper()
	res := ccmtest.Run(b, dir, env, args...)
	if res.Code != 0 || strings.Contains(res.Stdout, "failed") {
		b.Fatalf("ccm %s: exit %d\n%s%s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
}
