//go:build wasip1

package sdk

import (
	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/internal/wire"
)

// Host-call imports (namespace extism:host/user). Each takes the offset of a
// kernel block holding the JSON request and returns the offset of a block
// holding the JSON abi.Response; the guest frees both when large (see
// freeAtLeast).

//go:wasmimport extism:host/user ccm_fs_stat
func hostFSStat(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_read
func hostFSRead(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_write
func hostFSWrite(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_mkdir
func hostFSMkdir(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_remove
func hostFSRemove(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_chown
func hostFSChown(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_chmod
func hostFSChmod(uint64) uint64

//go:wasmimport extism:host/user ccm_fs_list
func hostFSList(uint64) uint64

//go:wasmimport extism:host/user ccm_exec
func hostExec(uint64) uint64

//go:wasmimport extism:host/user ccm_user_lookup
func hostUserLookup(uint64) uint64

//go:wasmimport extism:host/user ccm_group_lookup
func hostGroupLookup(uint64) uint64

//go:wasmimport extism:host/user ccm_lookup
func hostLookup(uint64) uint64

//go:wasmimport extism:host/user ccm_log
func hostLog(uint64) uint64

//go:wasmimport extism:host/user ccm_net_fetch
func hostNetFetch(uint64) uint64

// wasmHost is the Host a Resource gets inside the wasm guest. With stdio
// set, host calls use the stdio transport (see abi.ExportStdio).
type wasmHost struct{ stdio bool }

// freeAtLeast is the smallest kernel block a host call frees. Smaller blocks
// are left for the kernel's reset at the start of the next export call:
// Extism's kernel finds a block to free by walking every block allocated
// since that reset (a batch makes hundreds), and in the kernel Extism ships
// a freed block is not reused anyway. A large block is still freed, so a
// kernel that reuses blocks can keep a batch of large writes small.
const freeAtLeast = 16 << 10

// freeLarge frees the kernel block at offset, of n bytes, if it is large.
func freeLarge(offset uint64, n int) {
	if n >= freeAtLeast {
		kernelFree(offset)
	}
}

var _ Host = wasmHost{}

// call sends one host call: marshal req, hand it to the import fn, decode the
// abi.Response into resp (when resp is not nil). A refused or failed call is
// returned as *abi.CallError.
func (h wasmHost) call(name string, fn func(uint64) uint64, req, resp any) error {
	s := scratch.take()
	defer scratch.give(s)
	data, err := wire.AppendMarshal(s.req[:0], req)
	if err != nil {
		return &abi.CallError{Code: abi.CodeInvalid, Message: "encode " + name + " request: " + err.Error()}
	}
	s.keepReq(data)
	var out []byte
	if h.stdio {
		if out, err = callStdio(fn, data, s.resp); err != nil {
			return &abi.CallError{Code: abi.CodeIO, Message: name + ": " + err.Error()}
		}
		s.keepResp(out)
	} else {
		out = callKernel(fn, data)
	}
	if out == nil {
		return &abi.CallError{Code: abi.CodeIO, Message: name + ": the host returned no response"}
	}
	callErr, err := wire.UnmarshalResponse(out, resp)
	if err != nil {
		return &abi.CallError{Code: abi.CodeIO, Message: "decode " + name + " response: " + err.Error()}
	}
	if callErr != nil {
		return callErr
	}
	return nil
}

// callScratch holds the buffers of one host call, reused by the next: a
// stable file's apply makes one host call whose request and response are a
// few hundred bytes, and allocating both each time was garbage for the
// guest's collector. The documents never outlive the call (decoding copies
// every string out of the response), and buffers larger than
// maxScratch are not kept.
type callScratch struct {
	req, resp []byte
	busy      bool
}

// maxScratch is the largest buffer callScratch keeps.
const maxScratch = 4 << 10

// scratch is the one instance's host-call buffers: the guest makes one
// host call at a time (the stdio transport could not serve two at once).
var scratch callScratch

// take returns the buffers, or empty ones if a call is in progress (a
// plugin calling the host from two goroutines: it gets no shared buffer).
func (c *callScratch) take() *callScratch {
	if c.busy {
		return &callScratch{busy: true}
	}
	c.busy = true
	return c
}

func (c *callScratch) give(s *callScratch) {
	if s == c {
		c.busy = false
	}
}

func (c *callScratch) keepReq(b []byte) {
	if cap(b) <= maxScratch {
		c.req = b[:0]
	}
}

func (c *callScratch) keepResp(b []byte) {
	if cap(b) <= maxScratch {
		c.resp = b[:0]
	}
}

// callKernel sends one host call through Extism kernel blocks and returns
// the response document (nil: the host gave none).
func callKernel(fn func(uint64) uint64, req []byte) []byte {
	in := writeBlock(req)
	outOffset := fn(in)
	freeLarge(in, len(req))
	if outOffset == 0 {
		return nil
	}
	out := readBlock(outOffset)
	freeLarge(outOffset, len(out))
	return out
}

func (h wasmHost) Stat(req abi.FSStatRequest) (abi.FSStatResponse, error) {
	var resp abi.FSStatResponse
	err := h.call(abi.CallFSStat, hostFSStat, req, &resp)
	return resp, err
}

func (h wasmHost) ReadFile(req abi.FSReadRequest) ([]byte, error) {
	var resp abi.FSReadResponse
	err := h.call(abi.CallFSRead, hostFSRead, req, &resp)
	return resp.Content, err
}

func (h wasmHost) WriteFile(req abi.FSWriteRequest) error {
	return h.call(abi.CallFSWrite, hostFSWrite, req, nil)
}

func (h wasmHost) Mkdir(req abi.FSMkdirRequest) error {
	return h.call(abi.CallFSMkdir, hostFSMkdir, req, nil)
}

func (h wasmHost) Remove(req abi.FSRemoveRequest) error {
	return h.call(abi.CallFSRemove, hostFSRemove, req, nil)
}

func (h wasmHost) Chown(req abi.FSChownRequest) error {
	return h.call(abi.CallFSChown, hostFSChown, req, nil)
}

func (h wasmHost) Chmod(req abi.FSChmodRequest) error {
	return h.call(abi.CallFSChmod, hostFSChmod, req, nil)
}

func (h wasmHost) List(req abi.FSListRequest) ([]abi.DirEntry, error) {
	var resp abi.FSListResponse
	err := h.call(abi.CallFSList, hostFSList, req, &resp)
	return resp.Entries, err
}

func (h wasmHost) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	var resp abi.ExecResponse
	err := h.call(abi.CallExec, hostExec, req, &resp)
	return resp, err
}

func (h wasmHost) LookupUser(req abi.UserLookupRequest) (abi.UserLookupResponse, error) {
	var resp abi.UserLookupResponse
	err := h.call(abi.CallUserLookup, hostUserLookup, req, &resp)
	return resp, err
}

func (h wasmHost) LookupGroup(req abi.GroupLookupRequest) (abi.GroupLookupResponse, error) {
	var resp abi.GroupLookupResponse
	err := h.call(abi.CallGroupLookup, hostGroupLookup, req, &resp)
	return resp, err
}

func (h wasmHost) Lookup(path string) (any, bool, error) {
	var resp abi.LookupResponse
	err := h.call(abi.CallLookup, hostLookup, abi.LookupRequest{Path: path}, &resp)
	return resp.Value, resp.Found, err
}

// Log sends a line to the host log. It has no error to return: a log line
// that cannot be delivered is dropped rather than failing the resource.
func (h wasmHost) Log(level, message string) {
	_ = h.call(abi.CallLog, hostLog, abi.LogRequest{Level: level, Message: message}, nil)
}

func (h wasmHost) Fetch(req abi.NetFetchRequest) (abi.NetFetchResponse, error) {
	var resp abi.NetFetchResponse
	err := h.call(abi.CallNetFetch, hostNetFetch, req, &resp)
	return resp, err
}
