package engine

import (
	"context"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

// earlyLoad is the load of the plugins a manifest's text seems to use,
// started before the text is parsed (preloadGuessed).
type earlyLoad struct {
	wg   sync.WaitGroup
	done atomic.Bool
	big  bool // the text is large enough for its parse to leave megabytes of garbage
	// announced is how many resources of each plugin id the early load
	// announced to the host; loadDocument announces only the rest, so a
	// run's resources are not counted twice.
	announced map[string]int
}

// collectAfterParse is the manifest size from which parsed runs a garbage
// collection while the plugins still load: parsing allocates about 14
// bytes per byte of text (5 MB for 2000 resources), garbage once parsed,
// which the paused collector (pauseGC) would otherwise keep until the load
// ends: 3.5 MiB more peak RSS for a 2000-resource run.
const collectAfterParse = 64 << 10

// preloadGuessed starts loading the plugins of the types that the manifest
// text src seems to use (manifest.GuessTypes), on another core while the
// caller parses src. Parsing a 2000-resource manifest and loading a plugin
// take tens of milliseconds each: overlapped, a run starts about 40 ms
// sooner. loadDocument's Preload then finds the plugins loaded, or waits
// for the load in flight (a plugin loads once, under its lock). Errors
// are left to that Preload, which reports them with the manifest's
// context, so a guess changes no outcome; a wrong one only loads a plugin
// that the run does not use. The caller calls parsed when Parse returns and
// wait before it returns.
func (e *Engine) preloadGuessed(ctx context.Context, s scope, src []byte) *earlyLoad {
	l := &earlyLoad{big: len(src) >= collectAfterParse}
	var ids []string
	types, counts := manifest.GuessTypeCounts(src)
	for i, typ := range types {
		if typ == applyType {
			continue
		}
		id := s.plugins.id(typ)
		for range counts[i] {
			ids = append(ids, id)
		}
		if l.announced == nil {
			l.announced = map[string]int{}
		}
		l.announced[id] += counts[i]
	}
	if len(ids) == 0 {
		l.done.Store(true)
		return l
	}
	l.wg.Go(func() {
		defer l.done.Store(true)
		defer trace.StartRegion(ctx, "plugins loaded while the manifest is parsed").End()
		resume := pauseGC()
		defer resume()
		_ = e.opts.Plugins.Preload(ctx, s.pluginCaller(), ids)
	})
	return l
}

// parsed frees the parse's garbage when the load still runs: the caller
// would wait for it anyway, and the collector runs beside it.
func (l *earlyLoad) parsed() {
	if l.big && !l.done.Load() {
		runtime.GC()
	}
}

// wait waits for the load to end.
func (l *earlyLoad) wait() { l.wg.Wait() }
