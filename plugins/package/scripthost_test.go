package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// step is one expected ccm_exec: the argv joined by spaces and the recorded
// answer (or a call error).
type step struct {
	argv string
	out  abi.ExecResponse
	err  *abi.CallError
}

// scriptHost is an sdk.Host whose execs must follow a script exactly, in
// order, and answer with recorded outputs. It refuses non-probe execs when
// readOnly (as the host does in status and noop) and checks each request
// against the plugin's own Info: granted executable, probe prefix, timeout
// and environment.
type scriptHost struct {
	t        *testing.T
	readOnly bool
	facts    map[string]any // answers Lookup("facts.host.info.platformFamily")
	script   []step
	ran      []string
}

var _ sdk.Host = (*scriptHost)(nil)

func (h *scriptHost) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	h.t.Helper()
	line := strings.Join(req.Argv, " ")
	h.ran = append(h.ran, line)
	info := (&packageType{}).Info()
	switch {
	case req.Shell || req.Command != "":
		h.t.Errorf("exec %q used a shell", line)
	case !slices.Contains(info.Capabilities.Exec, req.Argv[0]):
		h.t.Errorf("exec %q: %s is not in the requested exec capability", line, req.Argv[0])
	case req.TimeoutMS <= 0:
		h.t.Errorf("exec %q has no timeout", line)
	case !slices.Equal(req.Env, env):
		h.t.Errorf("exec %q env %q", line, req.Env)
	case req.Probe && !probeMatches(info.Capabilities.ProbeExec, req.Argv):
		h.t.Errorf("probe %q matches no probe_exec prefix", line)
	}
	if h.readOnly && !req.Probe {
		h.t.Errorf("mutating exec %q in a read-only mode", line)
		return abi.ExecResponse{}, &abi.CallError{Code: abi.CodeDenied, Message: "read-only"}
	}
	if len(h.script) == 0 {
		h.t.Errorf("unexpected exec %q after the script ended", line)
		return abi.ExecResponse{}, &abi.CallError{Code: abi.CodeInvalid, Message: "unscripted"}
	}
	next := h.script[0]
	h.script = h.script[1:]
	if next.argv != line {
		h.t.Errorf("exec %q, want %q", line, next.argv)
	}
	if next.err != nil {
		return abi.ExecResponse{}, next.err
	}
	return next.out, nil
}

// probeMatches is the host's prefix rule (host/probe.go).
func probeMatches(prefixes, argv []string) bool {
	for _, p := range prefixes {
		words := strings.Split(p, " ")
		if len(argv) >= len(words) && slices.Equal(argv[:len(words)], words) {
			return true
		}
	}
	return false
}

func (h *scriptHost) Lookup(path string) (any, bool, error) {
	v, ok := h.facts[path]
	return v, ok, nil
}

func (h *scriptHost) Log(string, string) {}

func (h *scriptHost) denied(call string) *abi.CallError {
	h.t.Errorf("unexpected host call %s", call)
	return &abi.CallError{Code: abi.CodeDenied, Message: call + " not granted"}
}

func (h *scriptHost) Stat(abi.FSStatRequest) (abi.FSStatResponse, error) {
	return abi.FSStatResponse{}, h.denied(abi.CallFSStat)
}
func (h *scriptHost) ReadFile(abi.FSReadRequest) ([]byte, error) {
	return nil, h.denied(abi.CallFSRead)
}
func (h *scriptHost) WriteFile(abi.FSWriteRequest) error { return h.denied(abi.CallFSWrite) }
func (h *scriptHost) Mkdir(abi.FSMkdirRequest) error     { return h.denied(abi.CallFSMkdir) }
func (h *scriptHost) Remove(abi.FSRemoveRequest) error   { return h.denied(abi.CallFSRemove) }
func (h *scriptHost) Chown(abi.FSChownRequest) error     { return h.denied(abi.CallFSChown) }
func (h *scriptHost) Chmod(abi.FSChmodRequest) error     { return h.denied(abi.CallFSChmod) }
func (h *scriptHost) List(abi.FSListRequest) ([]abi.DirEntry, error) {
	return nil, h.denied(abi.CallFSList)
}
func (h *scriptHost) LookupUser(abi.UserLookupRequest) (abi.UserLookupResponse, error) {
	return abi.UserLookupResponse{}, h.denied(abi.CallUserLookup)
}
func (h *scriptHost) LookupGroup(abi.GroupLookupRequest) (abi.GroupLookupResponse, error) {
	return abi.GroupLookupResponse{}, h.denied(abi.CallGroupLookup)
}

// done fails the test when scripted execs were never made.
func (h *scriptHost) done() {
	h.t.Helper()
	for _, s := range h.script {
		h.t.Errorf("expected exec %q was not made", s.argv)
	}
}

func (h *scriptHost) Fetch(abi.NetFetchRequest) (abi.NetFetchResponse, error) {
	return abi.NetFetchResponse{}, &abi.CallError{Code: abi.CodeDenied, Message: "net not granted"}
}
