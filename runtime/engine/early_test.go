package engine

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// preloadSpy records the Preload calls of a run; the guessed one (started
// before the manifest is parsed, from preloadGuessed) can be slowed down
// and made to fail.
type preloadSpy struct {
	*fakePlugins
	mu         sync.Mutex
	calls      [][]string // guessed ones prefixed with "guessed"
	callers    []trust.Caller
	guessedErr error
	delay      time.Duration
	ended      bool // the guessed call returned
	// endedFirst records, for each call not from the guess, whether the
	// guessed call had returned when it came.
	endedFirst []bool
}

func (p *preloadSpy) Preload(_ context.Context, caller trust.Caller, types []string) error {
	guessed := fromGuess()
	p.mu.Lock()
	call := slices.Clone(types)
	if guessed {
		call = append([]string{"guessed"}, call...)
	}
	p.calls = append(p.calls, call)
	p.callers = append(p.callers, caller)
	if !guessed {
		p.endedFirst = append(p.endedFirst, p.ended)
	}
	p.mu.Unlock()
	if !guessed {
		return nil
	}
	time.Sleep(p.delay)
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	return p.guessedErr
}

// fromGuess reports whether preloadGuessed made this call.
func fromGuess() bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "preloadGuessed") {
			return true
		}
		if !more {
			return false
		}
	}
}

// TestEarlyPreloadGuessedTypes: the plugins of the types the text names
// are loaded once before the parse (for this scope's caller) and asked
// again by loadDocument, which waits for that load; the guess announces
// the two resources and loadDocument only what is left (each id at least
// once), so a run's resources are not counted twice, and only after the
// guessed load ended (even a slow one), so the host hears the guessed
// counts first; a manifest declaring plugins gets no guess.
func TestEarlyPreloadGuessedTypes(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n",
		"plugins.yaml": `
ccm:
  plugins:
    - path: other.wasm
  resources:
    - mark:
        - a: {}
`,
	})
	spy := &preloadSpy{fakePlugins: &fakePlugins{}, delay: 50 * time.Millisecond}
	res, err := run(t, nil, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Plugins = spy })
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || len(res.Events) != 2 {
		t.Fatalf("events %v", refs(res))
	}
	slices.SortFunc(spy.calls, func(a, b []string) int { return strings.Compare(strings.Join(a, " "), strings.Join(b, " ")) })
	if len(spy.calls) != 2 || !slices.Equal(spy.calls[0], []string{"guessed", "mark", "mark"}) || !slices.Equal(spy.calls[1], []string{"mark"}) {
		t.Fatalf("Preload calls %q, want the guessed [mark mark] and loadDocument's [mark]", spy.calls)
	}
	if !slices.Equal(spy.endedFirst, []bool{true}) {
		t.Fatalf("loadDocument's Preload came before the guessed one ended (%v): the host must hear the guessed counts first", spy.endedFirst)
	}
	if spy.callers[0].Manifest != filepath.Join(dir, "m.yaml") || spy.callers[0].Manifest != spy.callers[1].Manifest {
		t.Fatalf("callers %+v: the guessed load must run for the manifest's own scope", spy.callers)
	}

	spy = &preloadSpy{fakePlugins: &fakePlugins{}}
	_, err = run(t, nil, filepath.Join(dir, "plugins.yaml"), func(o *Options) { o.Plugins = spy })
	if err == nil || !strings.Contains(err.Error(), "other.wasm") {
		t.Fatalf("err = %v, want the missing plugin file", err)
	}
	if len(spy.calls) != 0 {
		t.Fatalf("Preload calls %q: a manifest with ccm.plugins gets no guess", spy.calls)
	}
}

// TestEarlyPreloadErrorLeftToLoad: the guessed load's error is not the
// run's: loadDocument's own Preload decides (here it succeeds).
func TestEarlyPreloadErrorLeftToLoad(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": "ccm:\n  resources:\n    - mark:\n        - a: {}\n"})
	spy := &preloadSpy{fakePlugins: &fakePlugins{}, guessedErr: errors.New("guessed load failed"), delay: 20 * time.Millisecond}
	res, err := run(t, nil, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Plugins = spy })
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || len(spy.calls) != 2 {
		t.Fatalf("events %v, Preload calls %q", refs(res), spy.calls)
	}
}

// TestEarlyPreloadWaitedOnParseError: a manifest that does not parse
// returns its parse error, and only once the guessed load has ended (no
// load outlives the run that started it).
func TestEarlyPreloadWaitedOnParseError(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": "ccm:\n  resources:\n    - mark:\n        - a: {}\n  bogus: [\n"})
	spy := &preloadSpy{fakePlugins: &fakePlugins{}, delay: 100 * time.Millisecond}
	_, err := run(t, nil, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Plugins = spy })
	if err == nil || !strings.Contains(err.Error(), "m.yaml:") {
		t.Fatalf("err = %v, want the parse error", err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.calls) != 1 || spy.calls[0][0] != "guessed" || !spy.ended {
		t.Fatalf("Preload calls %q, ended %v: the guessed load must have run and ended before Run returned", spy.calls, spy.ended)
	}
}
