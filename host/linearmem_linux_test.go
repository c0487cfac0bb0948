package host

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestMmapMemory: a linear memory with a maximum is a reservation that
// grows in place (never copied), reads zero where it grew, never offers
// room past its length, refuses a grow past the call's cap and past its
// maximum, and is unmapped by Free.
func TestMmapMemory(t *testing.T) {
	t.Parallel()
	const page = 64 << 10
	var limit atomic.Uint64
	lm := newLinearMemory(page, 64*page, &limit)
	m, ok := lm.(*mmapMemory)
	if !ok {
		t.Fatalf("a memory with a maximum is a %T, want *mmapMemory", lm)
	}
	var base unsafe.Pointer
	var prev []byte
	for i, size := range []uint64{page, 2 * page, 2 * page, 7 * page, 64 * page} {
		buf := m.Reallocate(size)
		if uint64(len(buf)) != size || uint64(cap(buf)) != size {
			t.Fatalf("grow %d: length %d capacity %d, want both %d", i, len(buf), cap(buf), size)
		}
		if m.length() != size {
			t.Fatalf("grow %d: length() %d, want %d", i, m.length(), size)
		}
		if i == 0 {
			base = unsafe.Pointer(unsafe.SliceData(buf))
		} else if unsafe.Pointer(unsafe.SliceData(buf)) != base {
			t.Fatalf("grow %d moved the memory", i)
		}
		for j := range prev {
			if buf[j] != prev[j] {
				t.Fatalf("grow %d: byte %d changed", i, j)
			}
		}
		for j := len(prev); j < len(buf); j++ {
			if buf[j] != 0 {
				t.Fatalf("grow %d: new byte %d is %d, want 0", i, j, buf[j])
			}
		}
		for j := range buf {
			buf[j] = byte(j*7 + i) // what the guest would write
		}
		prev = append(prev[:0], buf...)
	}
	if m.Reallocate(65*page) != nil {
		t.Fatal("grew past the maximum")
	}

	limit.Store(2 * page)
	lm2 := newLinearMemory(0, 64*page, &limit)
	if lm2.Reallocate(page) == nil || lm2.Reallocate(2*page) == nil {
		t.Fatal("refused a grow within the call's cap")
	}
	if lm2.Reallocate(3*page) != nil {
		t.Fatal("grew past the call's cap")
	}
	if lm2.length() != 2*page {
		t.Fatalf("a refused grow changed the length to %d", lm2.length())
	}
	limit.Store(0)
	if lm2.Reallocate(3*page) == nil {
		t.Fatal("refused a grow once the cap was lifted")
	}
	lm2.Free()

	m.Free()
	if m.res != nil || m.length() != 0 {
		t.Fatal("Free kept the memory")
	}
	m.Free() // twice is harmless
}

// TestLinearMemoryWithoutMaximum: a memory that declares no maximum (the
// host always sets one, but the allocator does not rely on it) is a Go
// slice.
func TestLinearMemoryWithoutMaximum(t *testing.T) {
	t.Parallel()
	m := newLinearMemory(0, 0, nil)
	if _, ok := m.(*sliceMemory); !ok {
		t.Fatalf("a memory without a maximum is a %T, want *sliceMemory", m)
	}
	if buf := m.Reallocate(64 << 10); len(buf) != 64<<10 {
		t.Fatalf("length %d", len(buf))
	}
	m.Free()
}

// TestInstanceMemoryOutsideHeap: a plugin that allocates 32 MiB grows its
// memory to that, and the Go heap does not: the instance's memories are
// mmap reservations (the live heap grows by the compiled module and the
// instance's bookkeeping only).
func TestInstanceMemoryOutsideHeap(t *testing.T) {
	h := newProbeHost(t, Limits{})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const alloc = 32 << 20
	res, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "big", Properties: map[string]any{"alloc": alloc}})
	if err != nil || res.Error != "" {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)

	h.mu.Lock()
	p := h.plugins["probe"]
	h.mu.Unlock()
	p.mu.Lock()
	mems := p.cur.mem.mems
	largest := p.cur.mem.largest()
	p.mu.Unlock()
	for i, m := range mems {
		if _, ok := m.(*mmapMemory); !ok {
			t.Errorf("memory %d is a %T, want *mmapMemory", i, m)
		}
	}
	if largest < alloc {
		t.Fatalf("the guest's memory is %d bytes after allocating %d", largest, alloc)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > alloc/2 {
		t.Fatalf("the live Go heap grew by %d MiB for a guest that allocated %d MiB", grew>>20, alloc>>20)
	}
}
