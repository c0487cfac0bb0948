package host

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// mmapMemory is one linear memory outside the Go heap: the memory's maximum
// is reserved as address space once (PROT_NONE, no pages, nothing counted
// against the commit limit), and each grow makes the next part readable and
// writable in place. Nothing is ever copied, the pages the guest never
// touches are never resident, and the Go collector neither counts nor
// scans it.
//
// Why it matters: in the Go heap, a plugin's memory (the file plugin's
// reaches 11 MiB validating 2000 resources) counted as live data, and the
// collector let the heap grow to twice the live data before collecting, so
// each MiB of guest memory cost about two of RSS, three while a doubling
// copy was alive.
type mmapMemory struct {
	res   []byte         // the reservation, max bytes
	size  uint64         // bytes readable and writable: res[:size]
	limit *atomic.Uint64 // the current call's cap (memoryCap); nil or 0 = none
}

// newLinearMemory returns an mmapMemory, or a sliceMemory when the memory
// declares no maximum or the reservation fails.
func newLinearMemory(capBytes, maxBytes uint64, limit *atomic.Uint64) linearMemory {
	if maxBytes > 0 && maxBytes <= 1<<32 {
		res, err := unix.Mmap(-1, 0, int(maxBytes), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err == nil {
			return &mmapMemory{res: res, limit: limit}
		}
	}
	return &sliceMemory{buf: make([]byte, 0, capBytes), max: maxBytes, limit: limit}
}

// Reallocate makes the memory size bytes long (wazero never asks beyond the
// maximum, nor to shrink). Growing past the current call's cap, or when the
// system refuses the pages, fails: the guest's memory.grow returns -1.
// The slice's capacity is its length: nothing may reach past it.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.res)) {
		return nil
	}
	if size > m.size {
		if m.limit != nil {
			if l := m.limit.Load(); l > 0 && size > l {
				return nil
			}
		}
		// Wasm pages are 64 KiB, a multiple of the system's page size, so
		// m.size stays page-aligned. New pages read as zero.
		if err := unix.Mprotect(m.res[m.size:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.res[:size:size]
}

// Free unmaps the memory. wazero calls it when the module closes, which
// the host does only while no call runs on the instance (under the
// plugin's lock) or from the guest's own exit, after which no guest code
// of it runs.
func (m *mmapMemory) Free() {
	if m.res != nil {
		_ = unix.Munmap(m.res)
		m.res, m.size = nil, 0
	}
}

func (m *mmapMemory) length() uint64 { return m.size }
