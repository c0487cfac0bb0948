package host

import (
	"context"
	"fmt"
	"runtime"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// compile builds typ's module. wazero fails a compile when a persistent
// cache entry is corrupt (or cannot be written), so a failed compile is
// retried without the persistent cache: when that works, the cache was at
// fault, and its entries are wiped so the next run rebuilds them. Only a
// module that does not compile at all is an error, and it wipes nothing.
//
// A trusted module (WithBuiltins) is compiled without the per-loop
// termination check (trusted.go); wazero keys compiled code by the module's
// bytes and that flag, so both kinds share one cache.
func (h *Host) compile(ctx context.Context, typ string, wasm []byte, trusted bool) (*extism.CompiledPlugin, error) {
	cp, _, err := h.compileCached(ctx, typ, wasm, trusted)
	return cp, err
}

// compileMarked is compile for a module that may be a built-in: a trusted
// module compiled into (or found in) the persistent cache is marked
// compiled (cold.go), sum being the sha256 of wasm.
func (h *Host) compileMarked(ctx context.Context, typ string, wasm []byte, trusted bool, sum string) (*extism.CompiledPlugin, error) {
	cp, persisted, err := h.compileCached(ctx, typ, wasm, trusted)
	if err == nil && persisted && trusted {
		h.markCompiled(sum, false)
	}
	return cp, err
}

// compileCached is compile; persisted says the module's compiled code is
// in the persistent cache (false when there is none or it failed).
func (h *Host) compileCached(ctx context.Context, typ string, wasm []byte, trusted bool) (*extism.CompiledPlugin, bool, error) {
	dir := h.cacheDir
	cp, err := h.newCompiled(ctx, wasm, h.cache, !trusted)
	if err == nil || dir == "" || ctx.Err() != nil {
		return cp, err == nil && dir != "", wrapCompile(typ, err)
	}
	cp, err2 := h.newCompiled(ctx, wasm, wazero.NewCompilationCache(), !trusted)
	if err2 != nil {
		return nil, false, wrapCompile(typ, err2)
	}
	warning := fmt.Errorf("compilation cache %s failed for type %q (%v); compiled without it and wiped its entries", dir, typ, err)
	if werr := wipeCache(dir); werr != nil {
		warning = fmt.Errorf("compilation cache %s failed for type %q (%v); compiled without it, and wiping it failed too: %w", dir, typ, err, werr)
	}
	h.mu.Lock()
	h.cacheWarning = warning
	h.mu.Unlock()
	return cp, false, nil
}

func wrapCompile(typ string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("compile plugin for type %q: %w", typ, err)
}

// newCompiled compiles wasm into its own wazero runtime (Extism keeps one
// runtime per compiled plugin); cache is shared by all of them. check is
// false only for the trusted built-ins (trusted.go).
func (h *Host) newCompiled(ctx context.Context, wasm []byte, cache wazero.CompilationCache, check bool) (*extism.CompiledPlugin, error) {
	// CloseOnContextDone is what lets a deadline stop a guest loop; without it
	// a runaway guest cannot be interrupted (docs/plugins.md).
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(check).
		WithMemoryLimitPages(h.limits.MemoryPages).
		WithCompilationCache(cache)
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}}
	// Compile the module's functions on every core: a cold compile of a Go
	// guest is most of a first run's time (1.45 s on one core, 0.85 s on two).
	ctx = experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
	h.pinKernel(ctx, cache, check)
	return extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, h.hostFuncs)
}
