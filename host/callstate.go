package host

import (
	"context"
	"crypto/x509"
	"fmt"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// callState is who a plugin call acts for, carried in the context given to
// the Extism call so every host function of that call reads it from its own
// ctx. The instance itself is chosen by the caller's scope (keyOf).
type callState struct {
	export string
	typ    string
	// caller is the resource the call acts for, its Mode already forced to
	// the export's (ccm_status read-only, noop requests noop, ...).
	caller trust.Caller
	// caps is what the plugin asked for in ccm_describe; nil for the engine's
	// own Exec, which no plugin stands behind.
	caps *abi.Capabilities
	// properties are the request's properties: a read-only probe exec may run
	// a command line written in one of them.
	properties map[string]any
	// builtin marks a plugin shipped inside ccm: its probe_exec and guards
	// are honoured on its own word in read-only modes; any other plugin's
	// probe_exec needs the grants' (probe.go).
	builtin bool
	// guards are the plugin's PluginInfo.Guards.
	guards []string
	// hostCalls is false for ccm_describe and ccm_validate, which must not
	// touch the system (ccm_log stays open).
	hostCalls bool
	limits    Limits
	deadline  *deadline
	// calls counts the host calls made so far, for Limits.HostCalls.
	calls int64
	// names caches user and group names for the Host's lifetime.
	names *nameCache
	// dirs are the directories whose fsync the call puts off to its end.
	dirs *dirSyncs
	// stdio is the instance's stdio transport when this call uses it.
	stdio *stdio
	// kernel caches the instance's Extism kernel functions across calls.
	kernel *kernelCache
	// logs is what the call has logged so far, against maxLogBytes.
	logs logBudget
	// netRoots, when set (TestDispatcher only), replace the system's TLS
	// roots for ccm_net_fetch.
	netRoots *x509.CertPool
	// parts are the staging files of writes in parts this call started
	// (fsparts.go), by target path.
	parts map[string]partInode
}

type callStateKey struct{}

func withCallState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, st)
}

func callStateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	return st
}

// resource names the caller in messages: "file#/etc/motd", or the type.
func (st *callState) resource() string {
	if st.caller.Resource != "" {
		return st.caller.Resource
	}
	return st.typ
}

// log sends a line to the caller's log, if it has one, within the call's
// log budget (logging.go).
func (st *callState) log(level, message string) {
	if st.caller.Log != nil {
		st.logs.pass(st.caller.Log, st.resource(), level, message)
	}
}

// countCall counts one host call and reports whether it is within
// Limits.HostCalls. The call that goes over ends the export call: its
// context is cancelled with the limit as the cause, which stops the guest
// and names the limit in the call's error.
func (st *callState) countCall() bool {
	st.calls++
	if st.calls <= st.limits.HostCalls {
		return true
	}
	if st.deadline != nil {
		st.deadline.cancel(st.hostCallsExceeded())
	}
	return false
}

// hostCallsExceeded is the limit error of a call that made too many host
// calls, or nil.
func (st *callState) hostCallsExceeded() *limitError {
	if st.calls <= st.limits.HostCalls {
		return nil
	}
	return &limitError{limit: "host_calls", value: fmt.Sprintf("%d calls per call", st.limits.HostCalls)}
}
