package host

import (
	"context"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// emptyModule is the smallest valid WebAssembly module.
var emptyModule = []byte("\x00asm\x01\x00\x00\x00")

// kernelPins keep Extism's kernel module compiled, one pin per engine
// (with and without the termination check), for the Host's lifetime.
//
// Every Extism plugin compiles the same kernel module into its own wazero
// runtime, and runtimes that share a compilation cache share one engine.
// wazero v1.12 publishes a module it loads from the persistent cache to
// that engine before it has compiled the module's entry preambles
// (engine_cache.go, getCompiledModule), so a plugin compiled at the same
// moment in another goroutine can find the kernel half built and
// instantiate it: "index out of range" in moduleEngine.NewFunction, seen
// when a manifest registers two plugins at once. Compiling one plugin
// alone first, and keeping it, keeps a complete kernel in the engine, so
// every later compile finds that one (its reference count never falls to
// zero while the Host lives).
type kernelPins struct {
	mu   sync.Mutex
	pins map[bool]*extism.CompiledPlugin // by check
	done map[bool]bool
}

// pin compiles the kernel alone for the engine of check, once per Host.
// A failed pin is not retried and changes nothing: compiles then run as
// before.
func (h *Host) pinKernel(ctx context.Context, cache wazero.CompilationCache, check bool) {
	if cache != h.cache {
		return // a private cache (the retry without the persistent one)
	}
	k := &h.kernel
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done[check] {
		return
	}
	if k.done == nil {
		k.done, k.pins = map[bool]bool{}, map[bool]*extism.CompiledPlugin{}
	}
	k.done[check] = true
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(check).
		WithMemoryLimitPages(h.limits.MemoryPages).
		WithCompilationCache(cache)
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: emptyModule}}}
	cp, err := extism.NewCompiledPlugin(context.WithoutCancel(ctx), manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, h.hostFuncs)
	if err == nil {
		k.pins[check] = cp
	}
}

// closeKernelPins releases the pins (Host.Close).
func (h *Host) closeKernelPins(ctx context.Context) error {
	k := &h.kernel
	k.mu.Lock()
	defer k.mu.Unlock()
	var first error
	for check, cp := range k.pins {
		if err := cp.Close(ctx); err != nil && first == nil {
			first = err
		}
		delete(k.pins, check)
	}
	return first
}
