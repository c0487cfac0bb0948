package engine

import (
	"runtime/debug"
	"sync"
)

// loadMemoryLimit bounds the heap while the collector is paused for plugin
// loading: a cold compile of the four built-ins peaks at about 130 MiB of
// RSS with or without collections, a warm load of one at about 60 MiB.
const loadMemoryLimit = 128 << 20

var gcPause struct {
	mu       sync.Mutex
	n        int
	percent  int
	memLimit int64
}

// pauseGC turns the garbage collector off until the returned function is
// called, with loadMemoryLimit (or a lower GOMEMLIMIT) as the point where
// it runs anyway. Loading a plugin (decoding, validating and instantiating a
// 3.5 MB module) allocates a lot that stays live until the load is done, so
// collections during it find little to free: they were 15 % of the CPU of a
// 1-resource run. Nested and concurrent pauses nest; the last resume
// restores GOGC and GOMEMLIMIT as they were.
func pauseGC() (resume func()) {
	gcPause.mu.Lock()
	if gcPause.n == 0 {
		gcPause.memLimit = debug.SetMemoryLimit(-1)
		gcPause.percent = debug.SetGCPercent(-1)
		debug.SetMemoryLimit(min(gcPause.memLimit, loadMemoryLimit))
	}
	gcPause.n++
	gcPause.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPause.mu.Lock()
			defer gcPause.mu.Unlock()
			gcPause.n--
			if gcPause.n == 0 {
				debug.SetGCPercent(gcPause.percent)
				debug.SetMemoryLimit(gcPause.memLimit)
			}
		})
	}
}
