//go:build wasip1

package main

//go:wasmimport extism:host/env alloc
func kernelAlloc(length uint64) uint64

//go:wasmimport extism:host/env store_u8
func kernelStoreU8(offset uint64, value uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset uint64, length uint64)

//go:wasmexport ccm_describe
func exportDescribe() int32 { return output(describeDoc) }

//go:wasmexport ccm_validate
func exportValidate() int32 { return output(validateDoc) }

//go:wasmexport ccm_status
func exportStatus() int32 { return output(statusDoc) }

//go:wasmexport ccm_apply
func exportApply() int32 { return output(applyDoc) }

func output(doc string) int32 {
	off := kernelAlloc(uint64(len(doc)))
	for i := 0; i < len(doc); i++ {
		kernelStoreU8(off+uint64(i), uint32(doc[i]))
	}
	outputSet(off, uint64(len(doc)))
	return 0
}
