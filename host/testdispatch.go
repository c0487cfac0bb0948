package host

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"sync"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestDispatcher serves host calls with the host's real handlers and its one
// check (allowed: mode, probe rule, the plugin's capabilities, the grant
// chain, the exec rules), outside any plugin instance. It exists for plugin
// unit tests (plugins/internal/fakehost), which run a plugin's Go code
// natively: through it they meet exactly the rules a plugin meets in ccm,
// so no plugin test can pass on a rule the host does not have.
//
// Test-oriented: ccm itself never uses it.
type TestDispatcher struct {
	table  map[string]hostcall.Handler
	names  hostcall.NameCache
	limits Limits
	// parts carries writes in parts (hostcall/fsparts.go) from one Call to
	// the next, as one plugin call's state does in ccm.
	partsMu sync.Mutex
	parts   map[string]hostcall.PartInode
}

// NewTestDispatcher returns a dispatcher with the host's default limits.
func NewTestDispatcher() *TestDispatcher {
	return &TestDispatcher{table: hostcall.Handlers(), limits: DefaultLimits()}
}

// TestCall is who one host call acts for, as the host would know it.
type TestCall struct {
	// Caller is the resource: its mode, grant chain (nil: the unconfined
	// root), lookup and log.
	Caller trust.Caller
	// Properties are the resource's properties, as its ccm_apply request
	// carries them: the probe rule reads guards there.
	Properties map[string]any
	// Info is the plugin's ccm_describe answer: its capabilities, probe_exec
	// and guards apply as in ccm.
	Info abi.PluginInfo
	// ThirdParty treats the plugin as not built in (a registered file).
	ThirdParty bool
	// RootCAs, when set, replace the system's TLS roots for ccm_net_fetch
	// (a test server's certificate). ccm itself has no such setting.
	RootCAs *x509.CertPool
}

// Call serves one host call (an abi.Call* name and its request value) and
// returns the response as the plugin would receive it.
func (d *TestDispatcher) Call(ctx context.Context, c TestCall, call string, req any) abi.Response {
	raw, err := json.Marshal(req)
	if err != nil {
		return abi.Response{Error: &abi.CallError{Code: abi.CodeInvalid, Message: "encode request: " + err.Error()}}
	}
	caps := c.Info.Capabilities
	st := newCallState(abi.ExportApply, c.Info.Type, c.Caller, d.limits.lowered(c.Caller.Limits))
	st.Caps, st.Properties, st.Guards, st.HostCalls, st.Names = &caps, c.Properties, c.Info.Guards, true, &d.names
	st.Builtin = !c.ThirdParty
	st.Dirs = &hostcall.DirSyncs{}
	st.NetRoots = c.RootCAs
	defer st.Dirs.SyncAll()
	if call == abi.CallFSWrite {
		d.partsMu.Lock()
		defer d.partsMu.Unlock()
		if d.parts == nil {
			d.parts = map[string]hostcall.PartInode{}
		}
		st.Parts = d.parts
	}
	if !st.countCall() {
		return abi.Response{Error: &abi.CallError{Code: abi.CodeTooLarge, Message: "host_calls limit"}}
	}
	return dispatch(withCallState(ctx, st), st, d.table, call, raw)
}
