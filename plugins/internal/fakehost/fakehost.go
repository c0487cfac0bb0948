package fakehost

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Host implements sdk.Host through the host's real handlers. Set Info to
// the plugin's own description (its capabilities, probe_exec and guards
// apply as in ccm); an empty Info grants the plugin nothing.
type Host struct {
	// Info is the plugin's ccm_describe answer.
	Info abi.PluginInfo
	// ReadOnly runs the calls in noop mode: mutations are refused, execs run
	// only as probes the host's probe rule allows.
	ReadOnly bool
	// Properties are the resource's properties, where the probe rule looks
	// for guards (exec onlyif, unless) in read-only modes.
	Properties map[string]any
	// Grants is the scope's grant chain; nil is the unconfined root.
	Grants trust.Chain
	// ThirdParty treats the plugin as not built in.
	ThirdParty bool
	// Fail makes the named call (abi.Call*) return this error without
	// reaching the host.
	Fail map[string]*abi.CallError
	// Ignore makes the named call report success without reaching the
	// host, to simulate an OS that does not converge.
	Ignore map[string]bool
	// Data answers Lookup: a dotted path into this map.
	Data map[string]any
	// RootCAs, when set, are the roots ccm_net_fetch trusts in place of
	// the system's (a test server's certificate).
	RootCAs *x509.CertPool

	mu    sync.Mutex
	calls []string
	logs  []Line
}

// Line is one Log call.
type Line struct {
	Level, Message string
}

var _ sdk.Host = (*Host)(nil)

var (
	dispatcherOnce sync.Once
	dispatcher     *host.TestDispatcher
)

// Calls returns the names of the calls made so far, in order.
func (h *Host) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// Count returns how many times the named call was made.
func (h *Host) Count(call string) int {
	n := 0
	for _, c := range h.Calls() {
		if c == call {
			n++
		}
	}
	return n
}

// Mutations returns the mutating calls made so far.
func (h *Host) Mutations() []string {
	var out []string
	for _, c := range h.Calls() {
		if mutating[c] {
			out = append(out, c)
		}
	}
	return out
}

// Logs returns the Log lines so far.
func (h *Host) Logs() []Line {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Line(nil), h.logs...)
}

// Reset forgets recorded calls and log lines.
func (h *Host) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls, h.logs = nil, nil
}

var mutating = map[string]bool{
	abi.CallFSWrite:  true,
	abi.CallFSMkdir:  true,
	abi.CallFSRemove: true,
	abi.CallFSChown:  true,
	abi.CallFSChmod:  true,
	abi.CallNetFetch: true,
}

// call records the call, applies Fail and Ignore, and otherwise serves it
// through the host's handlers, decoding the answer into resp (if not nil).
func (h *Host) call(name string, req, resp any) error {
	h.mu.Lock()
	h.calls = append(h.calls, name)
	h.mu.Unlock()
	if e := h.Fail[name]; e != nil {
		return e
	}
	if h.Ignore[name] {
		return nil
	}
	dispatcherOnce.Do(func() { dispatcher = host.NewTestDispatcher() })
	mode := trust.ModeApply
	if h.ReadOnly {
		mode = trust.ModeNoop
	}
	caller := trust.Caller{
		Resource: h.Info.Type,
		Grants:   h.Grants,
		Mode:     mode,
		Lookup:   h.lookup,
		Log:      h.log,
	}
	r := dispatcher.Call(context.Background(), host.TestCall{Caller: caller, Properties: h.Properties, Info: h.Info, ThirdParty: h.ThirdParty, RootCAs: h.RootCAs}, name, req)
	if r.Error != nil {
		return r.Error
	}
	if resp != nil && len(r.Ok) > 0 {
		if err := json.Unmarshal(r.Ok, resp); err != nil {
			return &abi.CallError{Code: abi.CodeIO, Message: fmt.Sprintf("decode %s response: %v", name, err)}
		}
	}
	return nil
}

func (h *Host) Stat(req abi.FSStatRequest) (abi.FSStatResponse, error) {
	var resp abi.FSStatResponse
	err := h.call(abi.CallFSStat, req, &resp)
	return resp, err
}

func (h *Host) ReadFile(req abi.FSReadRequest) ([]byte, error) {
	var resp abi.FSReadResponse
	err := h.call(abi.CallFSRead, req, &resp)
	return resp.Content, err
}

func (h *Host) WriteFile(req abi.FSWriteRequest) error { return h.call(abi.CallFSWrite, req, nil) }
func (h *Host) Mkdir(req abi.FSMkdirRequest) error     { return h.call(abi.CallFSMkdir, req, nil) }
func (h *Host) Remove(req abi.FSRemoveRequest) error   { return h.call(abi.CallFSRemove, req, nil) }
func (h *Host) Chown(req abi.FSChownRequest) error     { return h.call(abi.CallFSChown, req, nil) }
func (h *Host) Chmod(req abi.FSChmodRequest) error     { return h.call(abi.CallFSChmod, req, nil) }

func (h *Host) List(req abi.FSListRequest) ([]abi.DirEntry, error) {
	var resp abi.FSListResponse
	err := h.call(abi.CallFSList, req, &resp)
	return resp.Entries, err
}

func (h *Host) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	var resp abi.ExecResponse
	err := h.call(abi.CallExec, req, &resp)
	return resp, err
}

func (h *Host) LookupUser(req abi.UserLookupRequest) (abi.UserLookupResponse, error) {
	var resp abi.UserLookupResponse
	err := h.call(abi.CallUserLookup, req, &resp)
	return resp, err
}

func (h *Host) LookupGroup(req abi.GroupLookupRequest) (abi.GroupLookupResponse, error) {
	var resp abi.GroupLookupResponse
	err := h.call(abi.CallGroupLookup, req, &resp)
	return resp, err
}

// Lookup reads a dotted path from Data, through the host's ccm_lookup.
func (h *Host) Lookup(path string) (any, bool, error) {
	var resp abi.LookupResponse
	err := h.call(abi.CallLookup, abi.LookupRequest{Path: path}, &resp)
	return resp.Value, resp.Found, err
}

// Fetch makes an HTTP(S) request through the host's ccm_net_fetch.
func (h *Host) Fetch(req abi.NetFetchRequest) (abi.NetFetchResponse, error) {
	var resp abi.NetFetchResponse
	err := h.call(abi.CallNetFetch, req, &resp)
	return resp, err
}

// Log records a line, through the host's ccm_log.
func (h *Host) Log(level, message string) {
	_ = h.call(abi.CallLog, abi.LogRequest{Level: level, Message: message}, nil)
}

func (h *Host) lookup(path string) (any, bool) {
	var cur any = h.Data
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (h *Host) log(level, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, Line{Level: level, Message: message})
}
