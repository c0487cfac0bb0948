package host

import "github.com/tetratelabs/wazero/experimental"

// linearMemories backs every wasm linear memory of a plugin instance (the
// guest's and the Extism kernel's) with a Go slice whose capacity doubles
// when a memory.grow outruns it.
//
// wazero's default grows the slice by exactly the pages asked for, so a Go
// guest, whose runtime grows its memory a few hundred KiB at a time while it
// warms up and whenever its heap grows, had its whole memory copied on
// almost every grow. Doubling copies it a handful of times. (A reservation
// of the maximum with mmap never copies, but makes every new instance fault
// in its pages afresh: measured slower to instantiate and no faster to run.)
var linearMemories = experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
	return &sliceMemory{buf: make([]byte, 0, capBytes), max: maxBytes}
})

// sliceMemory is one linear memory: buf[:len] is the memory, the rest of
// its capacity is zeroed room to grow into.
type sliceMemory struct {
	buf []byte
	max uint64 // the memory's maximum in bytes; 0 = none declared
}

// Reallocate makes the memory size bytes long (wazero never asks beyond the
// maximum, nor to shrink).
func (m *sliceMemory) Reallocate(size uint64) []byte {
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
