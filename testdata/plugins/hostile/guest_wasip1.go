//go:build wasip1

package main

import (
	"encoding/json"
	"os"
	"unsafe"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// The exports: each reads its input from the kernel and sets its output.

//go:wasmexport ccm_describe
func exportDescribe() int32 { return finish(describe()) }

//go:wasmexport ccm_validate
func exportValidate() int32 { return finish(validate(readInput())) }

//go:wasmexport ccm_status
func exportStatus() int32 { return finish(status(readInput())) }

//go:wasmexport ccm_apply
func exportApply() int32 { return finish(apply(readInput())) }

func finish(out []byte) int32 {
	if out != nil {
		setRawOutput(out)
	}
	return 0
}

// Extism kernel imports.

//go:wasmimport extism:host/env input_length
func kernelInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func kernelInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func kernelAlloc(length uint64) uint64

//go:wasmimport extism:host/env length_unsafe
func kernelLengthUnsafe(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func kernelLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u8
func kernelStoreU8(offset uint64, value uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset uint64, length uint64)

// Host calls, raw: a kernel offset in, a kernel offset out.

//go:wasmimport extism:host/user ccm_fs_read
func rawFSRead(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_write
func rawFSWrite(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_chmod
func rawFSChmod(uint64) uint64

//go:wasmimport extism:host/user ccm_exec
func rawExec(uint64) uint64

//go:wasmimport extism:host/user ccm_log
func rawLog(uint64) uint64

// WASI calls the Go runtime does not expose.

//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd int32, buf unsafe.Pointer) int32

//go:wasmimport wasi_snapshot_preview1 sock_accept
func wasiSockAccept(fd int32, flags int32, newFD unsafe.Pointer) int32

func readInput() []byte {
	n := kernelInputLength()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(kernelInputLoadU8(uint64(i)))
	}
	return buf
}

func writeBlock(data []byte) uint64 {
	off := kernelAlloc(uint64(len(data)))
	for i, b := range data {
		kernelStoreU8(off+uint64(i), uint32(b))
	}
	return off
}

func readBlock(off uint64) []byte {
	n := kernelLengthUnsafe(off)
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(kernelLoadU8(off + uint64(i)))
	}
	return buf
}

func setRawOutput(data []byte) { outputSet(writeBlock(data), uint64(len(data))) }

// hostCall makes one host call the way the SDK does, on the kernel.
func hostCall(call string, req any) (abi.Response, error) {
	fn := map[string]func(uint64) uint64{
		abi.CallFSRead:  rawFSRead,
		abi.CallFSWrite: rawFSWrite,
		abi.CallFSChmod: rawFSChmod,
		abi.CallExec:    rawExec,
	}[call]
	b, err := json.Marshal(req)
	if err != nil {
		return abi.Response{}, err
	}
	out := fn(writeBlock(b))
	if out == 0 {
		return abi.Response{}, errNoAnswer
	}
	var resp abi.Response
	err = json.Unmarshal(readBlock(out), &resp)
	return resp, err
}

// far is an address past any linear memory the host allows; a variable, so
// the compiler cannot see the access is out of bounds.
var far uintptr = 0xFFFF_FFF0

// trap stores outside linear memory: a wasm trap, not a Go panic.
func trap() {
	var anchor uint64
	p := unsafe.Pointer(&anchor)
	*(*uint64)(unsafe.Add(p, far-uintptr(p))) = 1
}

func exit(code int32) { os.Exit(int(code)) }

// preopens counts the directories WASI preopened for the module (fd 3 on).
func preopens() int {
	n := 0
	var buf [8]byte
	for fd := int32(3); fd < 64; fd++ {
		if fdPrestatGet(fd, unsafe.Pointer(&buf)) == 0 {
			n++
		}
	}
	return n
}

func sockAccept(fd int32) int32 {
	var newFD int32
	return wasiSockAccept(fd, 0, unsafe.Pointer(&newFD))
}
