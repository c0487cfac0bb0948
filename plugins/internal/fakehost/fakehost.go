package fakehost

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Host implements sdk.Host on the real OS. The zero value is ready to use.
type Host struct {
	// ReadOnly refuses mutating calls and non-probe execs, as the host does
	// in ccm_status, noop and health-check-only mode.
	ReadOnly bool
	// Fail makes the named call (abi.Call*) return this error without doing
	// anything.
	Fail map[string]*abi.CallError
	// Ignore makes the named call report success without doing anything, to
	// simulate an OS that does not converge.
	Ignore map[string]bool
	// Data answers Lookup: a dotted path into this map.
	Data map[string]any

	mu    sync.Mutex
	calls []string
	logs  []Line
}

// Line is one Log call.
type Line struct {
	Level, Message string
}

var _ sdk.Host = (*Host)(nil)

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
}

// begin records the call and says whether to stop: a forced failure, a
// read-only refusal, or an ignored call (stop with nil error).
func (h *Host) begin(call string) (stop bool, err error) {
	h.mu.Lock()
	h.calls = append(h.calls, call)
	h.mu.Unlock()
	if e := h.Fail[call]; e != nil {
		return true, e
	}
	if h.ReadOnly && mutating[call] {
		return true, denied(call)
	}
	return h.Ignore[call], nil
}

func denied(call string) *abi.CallError {
	return &abi.CallError{Code: abi.CodeDenied, Message: call + " refused: the call is read-only (status, noop or health check)"}
}

// Lookup reads a dotted path from Data.
func (h *Host) Lookup(path string) (any, bool, error) {
	h.begin(abi.CallLookup)
	var cur any = h.Data
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = m[part]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// Log records a line.
func (h *Host) Log(level, message string) {
	h.begin(abi.CallLog)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, Line{Level: level, Message: message})
}

func callErr(code, format string, args ...any) *abi.CallError {
	return &abi.CallError{Code: code, Message: fmt.Sprintf(format, args...)}
}
