package host

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemories backs a wasm linear memory with a Go slice whose capacity
// doubles when a memory.grow outruns it. Plugin instances use it only where
// mmapMemory (linearmem_linux.go) is not available: off Linux, or for a
// memory without a maximum, which the host never compiles.
//
// wazero's default grows the slice by exactly the pages asked for, so a Go
// guest, whose runtime grows its memory a few hundred KiB at a time while it
// warms up and whenever its heap grows, had its whole memory copied on
// almost every grow. Doubling copies it a handful of times. On Linux a
// reservation of the maximum grows in place and stays out of the Go heap,
// whose collector would otherwise count it as live data (see mmapMemory).
var linearMemories = experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
	return &sliceMemory{buf: make([]byte, 0, capBytes), max: maxBytes}
})

// memoryCap is the memory limit of one plugin instance's current call when
// the caller's scope lowered it below the host's (memory_mb in an apply's
// limits). The host's own limit is the modules' maximum, fixed at compile
// time; a lower cap is enforced here instead, on every memory.grow, so one
// compiled module and instance serve scopes with different caps. Memory
// never shrinks, so an instance already above a call's cap is replaced by
// a fresh one before that call (see plugin.callLocked).
type memoryCap struct {
	limit atomic.Uint64  // bytes; 0 = only the modules' maximum applies
	mems  []linearMemory // the current instance's memories
}

// allocator returns the allocator for a new instance; it forgets the
// memories of the previous one.
func (c *memoryCap) allocator() experimental.MemoryAllocator {
	c.mems = nil
	return experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
		m := newLinearMemory(capBytes, maxBytes, &c.limit)
		c.mems = append(c.mems, m)
		return m
	})
}

// largest is the size in bytes of the instance's largest memory.
func (c *memoryCap) largest() uint64 {
	var n uint64
	for _, m := range c.mems {
		n = max(n, m.length())
	}
	return n
}

// sliceMemory is one linear memory: buf[:len] is the memory, the rest of
// its capacity is zeroed room to grow into.
type sliceMemory struct {
	buf   []byte
	max   uint64         // the memory's maximum in bytes; 0 = none declared
	limit *atomic.Uint64 // the current call's cap (memoryCap); nil or 0 = none
}

// Reallocate makes the memory size bytes long (wazero never asks beyond the
// maximum, nor to shrink). Growing past the current call's cap fails: the
// guest's memory.grow returns -1, which a Go guest reports as out of memory.
func (m *sliceMemory) Reallocate(size uint64) []byte {
	if m.limit != nil && size > uint64(len(m.buf)) {
		if l := m.limit.Load(); l > 0 && size > l {
			return nil
		}
	}
	if size > uint64(cap(m.buf)) {
		newCap := max(size, 2*uint64(cap(m.buf)))
		if m.max > 0 {
			newCap = max(size, min(newCap, m.max))
		}
		buf := make([]byte, size, newCap)
		copy(buf, m.buf)
		m.buf = buf
	}
	// The bytes between the old and the new length are zero: make zeroed
	// them and a wasm memory never writes past its length.
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }

func (m *sliceMemory) length() uint64 { return uint64(len(m.buf)) }

// linearMemory is a memory of an instance: a sliceMemory, or on Linux an
// mmapMemory.
type linearMemory interface {
	experimental.LinearMemory
	length() uint64 // the memory's size in bytes
}
