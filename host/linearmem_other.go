//go:build !linux

package host

import "sync/atomic"

func newLinearMemory(capBytes, maxBytes uint64, limit *atomic.Uint64) linearMemory {
	return &sliceMemory{buf: make([]byte, 0, capBytes), max: maxBytes, limit: limit}
}
