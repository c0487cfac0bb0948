package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// Cold start. Compiling a 3.6 MB Go guest takes about 1.4 s of CPU (0.85 s
// on two cores); a run that meets a built-in module not yet in the
// compilation cache would pay all of it to call the module once. wazero's
// interpreter loads the same module in a fraction of that but runs it about
// ten times slower (~3 ms per resource against ~0.2 ms compiled), so it
// wins only for small runs. With ColdStart set (cmd/ccm sets it), a trusted
// built-in that is not known to be compiled, in a run that announces
// (Preload) at most MaxResources resources of its type, is interpreted for
// that run, and the compile is left to one detached background process that
// fills the cache for the next run (ColdStart.Background).
//
// "Not compiled yet": wazero does not say whether its cache holds a module,
// so the Host keeps its own marker per module in the cache directory
// (ccm-compiled/), written after a load that compiled the module into (or
// found it in) the persistent cache, and removed with the cache's entries
// (wipeCache). A marker names what wazero's key depends on and ccm can see:
// the module's sha256, whether the termination check is compiled in, the
// wazero version and GOOS/GOARCH. A missing, unreadable or mismatching
// marker means "not compiled" (interpret, cheap when wrong); a marker whose
// entry is gone (the wazero directory removed by hand) means a compile in
// this run, which is what every run did before.
//
// Third-party modules never take this path: they are always compiled, with
// the termination check. An interpreted built-in runs without the check, as
// a compiled one does, under the same watchdog (trusted.go); the
// interpreter is Go code, so the watchdog goroutine always gets to run.

// ColdStart configures how a Host loads a built-in module (WithBuiltins) that
// is not in the compilation cache yet (WithColdStart).
type ColdStart struct {
	// MaxResources is the most resources of one type a run may announce
	// through Preload for that type's built-in module to be interpreted
	// while it is not compiled. 0 turns interpreting off. A type whose
	// announced resources grow past it during the Host's life (child
	// manifests, a pipe) is compiled then, as is one whose marker appears
	// (the background compile finished).
	MaxResources int
	// Background, when set, is called at most once per Host, after a
	// Preload interpreted built-ins, with their type names and an open lock
	// file on which the Host holds an exclusive flock: the process that
	// compiles must inherit it (exec.Cmd.ExtraFiles) and keep it open until
	// it is done, so that only one background compile runs per cache
	// directory. The Host closes its own copy after Background returns. It
	// is not called when there is no persistent cache, or when another
	// process holds the lock (a compile is already running).
	Background func(types []string, lock *os.File) error
	// Interpreted, when set, is called after each Preload that has
	// interpreted built-ins, with their type names (for a debug line).
	Interpreted func(types []string)
}

// WithColdStart lets the Host interpret small runs' built-ins that are not
// compiled yet (cold.go). Without it every module is compiled before its
// first call.
func WithColdStart(c ColdStart) Option {
	return func(cfg *config) { cfg.cold = c }
}

// compileLockName is the lock file, in the cache directory, held by the
// one background compile (ColdStart.Background).
const compileLockName = "ccm-compile.lock"

// markerDir holds the compiled-module markers, in the cache directory.
const markerDir = "ccm-compiled"

// markerContent is what the marker of a module (its sha256 sum) compiled
// with or without the termination check holds; its name is the sha256 of it.
func markerContent(sum string, check bool) string {
	return fmt.Sprintf("ccm compiled module v1\nsha256 %s\ncheck %t\nwazero %s\nplatform %s/%s\n", sum, check, wazero.CCMVersion(), runtime.GOOS, runtime.GOARCH)
}

func (h *Host) markerPath(content string) string {
	k := sha256.Sum256([]byte(content))
	return filepath.Join(h.cacheDir, markerDir, hex.EncodeToString(k[:]))
}

// compiledMarked reports whether the module sum has a valid marker: it was
// compiled into the persistent cache by this wazero on this platform.
func (h *Host) compiledMarked(sum string, check bool) bool {
	if h.cacheDir == "" || sum == "" {
		return false
	}
	want := markerContent(sum, check)
	b, err := os.ReadFile(h.markerPath(want))
	return err == nil && string(b) == want
}

// markCompiled writes the marker of sum unless a valid one is there. It is
// written whole under a temporary name and renamed, so a reader sees the old
// state or the new, never a torn marker; a failure only means the next run
// interprets again. No fsync: a marker lost or emptied by a crash reads as
// missing, which is safe.
func (h *Host) markCompiled(sum string, check bool) {
	if h.cacheDir == "" || sum == "" || h.compiledMarked(sum, check) {
		return
	}
	content := markerContent(sum, check)
	path := h.markerPath(content)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return
	}
	_, werr := f.WriteString(content)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		_ = os.Remove(f.Name())
	}
}

// interpretCold reports whether p (a built-in about to be loaded, its
// announced count known) is to be interpreted.
func (p *plugin) interpretCold() bool {
	h := p.host
	return p.trusted && !p.registered && h.cold.MaxResources > 0 &&
		p.announced > 0 && p.announced <= h.cold.MaxResources &&
		!h.compiledMarked(p.sum, false)
}

// newInterpreted loads a trusted module with wazero's interpreter: no
// machine code, no compilation cache (the interpreter does not use one).
func (h *Host) newInterpreted(ctx context.Context, typ string, wasm []byte) (*extism.CompiledPlugin, error) {
	rc := wazero.NewRuntimeConfigInterpreter().
		WithCloseOnContextDone(false). // trusted: watched instead (trusted.go)
		WithMemoryLimitPages(h.limits.MemoryPages)
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}}
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, h.hostFuncs)
	return cp, wrapCompile(typ, err)
}

// announce adds n resources of p's type to what this Host's runs announced,
// and, when p is interpreted and that is now past ColdStart.MaxResources or
// its compiled code is in the cache, loads it compiled: later calls run
// compiled code. Its description is kept; its instances are replaced.
func (p *plugin) announce(ctx context.Context, n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.announced += n
	if !p.interpreted || p.closed || p.compiled == nil {
		return nil
	}
	if p.announced <= p.host.cold.MaxResources && !p.host.compiledMarked(p.sum, false) {
		return nil
	}
	wasm, _, _, err := p.host.module(p.typ)
	if err != nil {
		return err
	}
	cp, err := p.host.compileMarked(ctx, p.typ, wasm, true, p.sum)
	if err != nil {
		return err
	}
	for len(p.live) > 0 {
		p.discard(ctx, p.live[0])
	}
	_ = p.compiled.Close(context.WithoutCancel(ctx))
	p.compiled, p.interpreted = cp, false
	return nil
}

// startBackground hands the types interpreted so far to
// ColdStart.Background, once per Host, holding the compile lock.
func (h *Host) startBackground(types []string) {
	if len(types) > 0 && h.cold.Interpreted != nil {
		h.cold.Interpreted(types)
	}
	h.mu.Lock()
	start := len(types) > 0 && h.cold.Background != nil && h.cacheDir != "" && !h.backgroundStarted && !h.closed
	if start {
		h.backgroundStarted = true
	}
	h.mu.Unlock()
	if !start {
		return
	}
	lock, err := tryCompileLock(h.cacheDir)
	if err != nil || lock == nil {
		return // a compile is running already, or no lock: the next run tries again
	}
	defer lock.Close()
	// An error starting it is not the run's: the module stays interpreted
	// and the next small run tries again.
	_ = h.cold.Background(types, lock)
}

// tryCompileLock takes the background compile's lock in dir without
// waiting: nil, nil when another process holds it.
func tryCompileLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, compileLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

// WaitBackgroundCompile waits until no background compile holds the lock
// of the cache directory dir (or ctx ends): for tests and benchmarks that
// must not leave one running.
func WaitBackgroundCompile(ctx context.Context, dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, compileLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Compile compiles the modules of types (every type of the Host's sources
// when types is empty) into the persistent compilation cache, as a run
// would, and marks the built-ins compiled; nothing is instantiated. This is
// `ccm plugin compile`, and the background compile of a cold start.
func (h *Host) Compile(ctx context.Context, types []string) error {
	if len(types) == 0 {
		types = h.types()
	}
	var errs []error
	for _, typ := range types {
		wasm, _, trusted, err := h.module(typ)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var sum string
		if trusted {
			sum = h.sumOf(typ, wasm, trusted)
		}
		cp, err := h.compileMarked(ctx, typ, wasm, trusted, sum)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, cp.Close(ctx))
	}
	return errors.Join(errs...)
}

// Types lists the type names the Host's sources provide (built-in and
// plugin directories), sorted.
func (h *Host) Types() []string { return h.types() }
