package host

import (
	"context"
	"fmt"
	"time"

	"github.com/ccm-dev/ccm/host/hostcall"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// callState is a plugin call's state, carried in the context given to the
// Extism call so every host function of that call reads it from its own
// ctx. The instance itself is chosen by the caller's scope (keyOf). Its
// hostcall.State is what the host calls read: who the call acts for (its
// Caller, Mode already forced to the export's), the plugin's capabilities
// and guards, the request's properties; the rest is the runtime's.
type callState struct {
	hostcall.State
	limits   Limits
	deadline *deadline
	// calls counts the host calls made so far, for Limits.HostCalls.
	calls int64
	// stdio is the instance's stdio transport when this call uses it.
	stdio *stdio
	// kernel caches the instance's Extism kernel functions across calls.
	kernel *kernelCache
	// logs is what the call has logged so far, against maxLogBytes.
	logs logBudget
	// encode, when set, makes the call's input once its instance is chosen,
	// given the serial whose handles that instance may receive (0: none;
	// handles.go), and says how many handles the input carries.
	encode func(serial uint64) (input []byte, handles int, err error)
	// served is the serial of the instance that served the call.
	served uint64
}

// newCallState is the state of one call of export for a resource of type
// typ, under limits (already lowered to the caller's).
func newCallState(export, typ string, caller trust.Caller, limits Limits) *callState {
	st := &callState{
		State: hostcall.State{
			Export:          export,
			Type:            typ,
			Caller:          caller,
			RequestBytes:    limits.RequestBytes,
			ExecOutputBytes: limits.ExecOutputBytes,
		},
		limits: limits,
	}
	st.Runtime = st
	return st
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
	if st.Caller.Resource != "" {
		return st.Caller.Resource
	}
	return st.Type
}

// Log sends a line to the caller's log, if it has one, within the call's
// log budget (logging.go); hostcall.Runtime.
func (st *callState) Log(level, message string) {
	if st.Caller.Log != nil {
		st.logs.pass(st.Caller.Log, st.resource(), level, message)
	}
}

// ExtendDeadline moves the call's deadline, if it has one, by delta;
// hostcall.Runtime.
func (st *callState) ExtendDeadline(delta time.Duration) {
	if st.deadline != nil {
		st.deadline.extend(delta)
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
