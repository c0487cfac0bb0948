//go:build wasip1

package main

//go:wasmimport extism:host/env log_warn
func extismLogWarn(offset uint64)

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

// extismLog logs through the Extism kernel's log_warn, as a plugin built
// with another PDK would, instead of the ccm_log host call.
func extismLog(msg string) {
	off := extismAlloc(uint64(len(msg)))
	for i := 0; i < len(msg); i++ {
		extismStoreU8(off+uint64(i), uint32(msg[i]))
	}
	extismLogWarn(off)
}
