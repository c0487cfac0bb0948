package hostcall

import (
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// access is what one host call wants to touch.
type access struct {
	call string
	// path is the target as the plugin wrote it, for messages.
	path string
	// target is what grants match: the exact path of what the call then
	// acts on through a descriptor (fs, see location), or the absolute
	// executable (exec).
	target string
	// exec is the ccm_exec request, for the probe rule of read-only modes.
	exec *abi.ExecRequest
	// interp marks the check of a script's #! interpreter: the probe rule
	// was decided on the script itself.
	interp bool
}

// callKind tells which capability a host call needs and whether it mutates;
// open calls (ccm_lookup, ccm_log) need none.
func callKind(call string) (kind trust.Kind, mutating, open bool) {
	switch call {
	case abi.CallFSStat, abi.CallFSRead, abi.CallFSList:
		return trust.FSRead, false, false
	case abi.CallFSWrite, abi.CallFSMkdir, abi.CallFSRemove, abi.CallFSChown, abi.CallFSChmod:
		return trust.FSWrite, true, false
	case abi.CallExec:
		return trust.Exec, false, false
	case abi.CallUserLookup, abi.CallGroupLookup:
		return trust.Users, false, false
	case abi.CallNetFetch:
		// A download writes; read-only modes make no request at all.
		return trust.Net, true, false
	case abi.CallLookup, abi.CallLog:
		return "", false, true
	}
	// An unknown call is refused below as needing a capability nobody grants.
	return trust.Kind(call), false, false
}

// checked, set only by TestEveryHostCallIsChecked, learns each call that
// allowed checks.
var checked func(call string)

// Mutating reports whether a host call changes the system; the read-only
// modes refuse it.
func Mutating(call string) bool {
	_, mutating, _ := callKind(call)
	return mutating
}

// allowed is the one check every host call passes before any OS work. In
// order: calls during ccm_describe/ccm_validate; the mode (read-only modes
// refuse every mutation, and run an exec only as an authorised probe); the
// plugin's own requested capabilities; the caller's grant chain. The
// effective grant is therefore the plugin's request ∩ every scope's grant.
//
// st.Caps is nil for the engine's own Exec (health checks the manifest
// wrote): then only the grant chain applies.
func allowed(st *State, a access) *abi.CallError {
	if checked != nil {
		checked(a.call)
	}
	kind, mutating, open := callKind(a.call)
	if open {
		return nil
	}
	if !st.HostCalls {
		return denied("%s is not available during %s, which must not touch the system", a.call, st.Export)
	}
	mode := st.Caller.Mode
	if mutating && mode.ReadOnly() {
		return denied("%s refused for %s: %s mode is read-only", a.call, a.path, mode)
	}
	if a.call == abi.CallExec && mode.ReadOnly() && st.Caps != nil && !a.interp {
		if why := probeRefused(st, a.exec, a.target); why != "" {
			return denied("%s refused for %s: %s mode runs only probes: %s", a.call, a.target, mode, why)
		}
	}
	what := string(kind) + " not granted"
	if kind == trust.Users {
		if st.Caps != nil && !trust.GrantAllows(*st.Caps, kind, "") {
			return denied("%s: the plugin did not request users in its capabilities", what)
		}
		if !st.Caller.Grants.Allows(kind, "") {
			return denied("%s; add users: true to grants in the apply", what)
		}
		return nil
	}
	where := a.target
	if a.path != "" && a.path != a.target {
		where = a.path + " (resolved to " + a.target + ")"
	}
	if st.Caps != nil && !trust.GrantAllows(*st.Caps, kind, a.target) {
		return denied("%s for %s: the plugin's capabilities do not request it", what, where)
	}
	if !st.Caller.Grants.Allows(kind, a.target) {
		return denied("%s for %s; add it to grants in the apply", what, where)
	}
	return nil
}
