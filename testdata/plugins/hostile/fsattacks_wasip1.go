//go:build wasip1

package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

//go:wasmimport extism:host/user ccm_fs_stat
func rawFSStat(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_mkdir
func rawFSMkdir(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_remove
func rawFSRemove(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_chown
func rawFSChown(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_list
func rawFSList(uint64) uint64

// fsHostCall is hostCall for every filesystem call.
func fsHostCall(call string, req any) (abi.Response, error) {
	fn := map[string]func(uint64) uint64{
		abi.CallFSRead:   rawFSRead,
		abi.CallFSWrite:  rawFSWrite,
		abi.CallFSChmod:  rawFSChmod,
		abi.CallFSStat:   rawFSStat,
		abi.CallFSMkdir:  rawFSMkdir,
		abi.CallFSRemove: rawFSRemove,
		abi.CallFSChown:  rawFSChown,
		abi.CallFSList:   rawFSList,
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
