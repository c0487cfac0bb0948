package host

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
)

// kernel is the Extism kernel module of one plugin instance, with the two
// functions host calls need, looked up once per instance.
//
// The length of a request block is read with length_unsafe, which reads the
// block's header: the checked length walks every block allocated since the
// export call began (a batch makes hundreds, and each step of a wasm loop is
// a round trip to Go under the termination checks). An offset that is not a
// block yields a wrong length, which is bounded by Limits.RequestBytes and the
// kernel's memory; the bytes it reads are the instance's own kernel memory,
// which the guest can read anyway.
//
// Extism's CurrentPlugin looks a kernel function up on every use, and a
// wazero lookup builds a callable function with a fresh 10 KiB stack each
// time; a host call used two (length of the request, alloc of the response).
// The kernel module is Extism's public context value, and an instance serves
// one call at a time (plugin.mu), so the cached functions and their stack
// buffer are never shared.
type kernel struct {
	mod    api.Module
	alloc  api.Function
	length api.Function
	stack  [1]uint64
}

// kernelCache holds one plugin's kernel; each call's state points to it.
type kernelCache struct{ k *kernel }

var errNoKernel = errors.New("no Extism kernel in the call context")

// kernelFor returns the kernel of the instance serving ctx, from st's cache
// when it is that instance's (a discarded instance's kernel never is).
func kernelFor(ctx context.Context, st *callState) (*kernel, error) {
	mod, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
	if !ok || mod == nil {
		return nil, errNoKernel
	}
	var cache *kernelCache
	if st != nil {
		cache = st.kernel
	}
	if cache != nil && cache.k != nil && cache.k.mod == mod {
		return cache.k, nil
	}
	k := &kernel{mod: mod, alloc: mod.ExportedFunction("alloc"), length: mod.ExportedFunction("length_unsafe")}
	if k.length == nil {
		k.length = mod.ExportedFunction("length") // an older kernel
	}
	if k.alloc == nil || k.length == nil {
		return nil, errors.New("the Extism kernel exports no alloc or length function")
	}
	if cache != nil {
		cache.k = k
	}
	return k, nil
}

// call runs fn with one argument and returns its one result.
func (k *kernel) call(ctx context.Context, fn api.Function, arg uint64) (uint64, error) {
	k.stack[0] = arg
	if err := fn.CallWithStack(ctx, k.stack[:]); err != nil {
		return 0, err
	}
	return k.stack[0], nil
}

// read returns a copy of the kernel block at offset, refusing one longer
// than limit bytes before copying it (limit <= 0: no limit). size is the
// block's length, also when it is refused.
func (k *kernel) read(ctx context.Context, offset uint64, limit int64) (data []byte, size uint64, err error) {
	size, err = k.call(ctx, k.length, offset)
	if err != nil {
		return nil, 0, err
	}
	if limit > 0 && size > uint64(limit) {
		return nil, size, nil
	}
	if offset > 1<<32-1 || size > 1<<32-1 {
		return nil, size, errors.New("out of memory bounds")
	}
	view, ok := k.mod.Memory().Read(uint32(offset), uint32(size))
	if !ok {
		return nil, size, errors.New("out of memory bounds")
	}
	// Read returns a view of the kernel's memory, which the guest reuses.
	return append([]byte(nil), view...), size, nil
}

// write copies data into a new kernel block and returns its offset.
func (k *kernel) write(ctx context.Context, data []byte) (uint64, error) {
	offset, err := k.call(ctx, k.alloc, uint64(len(data)))
	if err != nil {
		return 0, err
	}
	if offset == 0 && len(data) > 0 {
		return 0, fmt.Errorf("kernel could not allocate %d bytes", len(data))
	}
	if !k.mod.Memory().Write(uint32(offset), data) {
		return 0, errors.New("kernel block out of memory bounds")
	}
	return offset, nil
}
