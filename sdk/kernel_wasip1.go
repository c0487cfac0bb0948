//go:build wasip1

package sdk

// Extism kernel imports (namespace extism:host/env). Data crosses between the
// guest's own memory and the kernel's memory only through these calls, so
// the helpers below move 8 bytes per call and single bytes only for the tail:
// each kernel call costs far more than the copy it does. They serve hosts
// that do not speak the stdio transport (stdio_wasip1.go), which ccm's does;
// ccm_describe and errors always take this way.

//go:wasmimport extism:host/env input_length
func kernelInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func kernelInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func kernelInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func kernelAlloc(length uint64) uint64

//go:wasmimport extism:host/env free
func kernelFree(offset uint64)

//go:wasmimport extism:host/env length_unsafe
func kernelLengthUnsafe(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func kernelLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env load_u64
func kernelLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env store_u8
func kernelStoreU8(offset uint64, value uint32)

//go:wasmimport extism:host/env store_u64
func kernelStoreU64(offset uint64, value uint64)

//go:wasmimport extism:host/env output_set
func kernelOutputSet(offset uint64, length uint64)

//go:wasmimport extism:host/env error_set
func kernelErrorSet(offset uint64)

// The copy loops below move 8 bytes per kernel call. For the tail they move
// the last 8 bytes of the block once more, overlapping bytes already moved:
// load_u64 and store_u64 are plain memory accesses inside the host, while
// every load_u8/store_u8 is a full call into the Extism kernel. Only blocks
// shorter than 8 bytes go byte by byte.

// readInput copies the export's input out of the kernel.
func readInput() []byte {
	n := kernelInputLength()
	buf := make([]byte, n)
	if n < 8 {
		for i := uint64(0); i < n; i++ {
			buf[i] = byte(kernelInputLoadU8(i))
		}
		return buf
	}
	for i := uint64(0); i+8 <= n; i += 8 {
		putU64(buf[i:], kernelInputLoadU64(i))
	}
	putU64(buf[n-8:], kernelInputLoadU64(n-8))
	return buf
}

// readBlock copies a kernel memory block into a new slice. The block must be
// one the host just returned: its length is read from the block's header
// (length_unsafe), because the kernel's checked length walks every block
// allocated since the export call began.
func readBlock(offset uint64) []byte {
	n := kernelLengthUnsafe(offset)
	buf := make([]byte, n)
	if n < 8 {
		for i := uint64(0); i < n; i++ {
			buf[i] = byte(kernelLoadU8(offset + i))
		}
		return buf
	}
	for i := uint64(0); i+8 <= n; i += 8 {
		putU64(buf[i:], kernelLoadU64(offset+i))
	}
	putU64(buf[n-8:], kernelLoadU64(offset+n-8))
	return buf
}

// writeBlock allocates a kernel block holding data and returns its offset;
// the caller frees it (or hands it to output_set/error_set, which own it).
func writeBlock(data []byte) uint64 {
	n := uint64(len(data))
	offset := kernelAlloc(n)
	if n < 8 {
		for i := uint64(0); i < n; i++ {
			kernelStoreU8(offset+i, uint32(data[i]))
		}
		return offset
	}
	for i := uint64(0); i+8 <= n; i += 8 {
		kernelStoreU64(offset+i, getU64(data[i:]))
	}
	kernelStoreU64(offset+n-8, getU64(data[n-8:]))
	return offset
}

func setOutput(data []byte) {
	kernelOutputSet(writeBlock(data), uint64(len(data)))
}

func setError(msg string) {
	kernelErrorSet(writeBlock([]byte(msg)))
}

// putU64 and getU64 are little-endian like wasm memory; written out instead of
// importing encoding/binary to keep the guest small.
func putU64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	b[4], b[5], b[6], b[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}

func getU64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
