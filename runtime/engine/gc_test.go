package engine

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestPauseGCRestores: pauses nest and overlap; while any is held the
// collector is off with a memory limit; the last resume restores GOGC and
// GOMEMLIMIT as they were, and a resume called twice counts once.
func TestPauseGCRestores(t *testing.T) {
	oldPercent := debug.SetGCPercent(73)
	oldLimit := debug.SetMemoryLimit(1 << 40)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})

	outer := pauseGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC while paused = %d, want off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != loadMemoryLimit {
		t.Fatalf("memory limit while paused = %d, want %d", l, loadMemoryLimit)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := pauseGC()
			r()
			r()
		})
	}
	wg.Wait()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC after inner resumes = %d, want still off", p)
	}
	outer()
	outer()
	if p := debug.SetGCPercent(73); p != 73 {
		t.Fatalf("GOGC after the last resume = %d, want 73", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Fatalf("memory limit after the last resume = %d, want %d", l, int64(1<<40))
	}
}

// TestPauseGCKeepsLowerLimit: a GOMEMLIMIT below loadMemoryLimit stays.
func TestPauseGCKeepsLowerLimit(t *testing.T) {
	old := debug.SetMemoryLimit(32 << 20)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	resume := pauseGC()
	defer resume()
	if l := debug.SetMemoryLimit(-1); l != 32<<20 {
		t.Fatalf("memory limit while paused = %d, want the lower 32 MiB", l)
	}
}
