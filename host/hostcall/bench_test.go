package hostcall

import (
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// BenchmarkExecChecks is what the exec rules add to each exec (resolve
// and open the program, read its #! line, match the grant, check each
// environment entry, mark descriptors close-on-exec), against
// host.BenchmarkExecTrue, a whole exec of /bin/true through Host.Exec.
func BenchmarkExecChecks(b *testing.B) {
	st := &State{Caller: trust.Caller{Grants: trust.Chain{trust.All()}}, HostCalls: true}
	req := abi.ExecRequest{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}}
	for b.Loop() {
		prog, cerr := openProgram("true", envPath(req.Env))
		if cerr != nil {
			b.Fatal(cerr)
		}
		if cerr := allowed(st, access{call: abi.CallExec, path: "true", target: prog.path, exec: &req}); cerr != nil {
			b.Fatal(cerr)
		}
		if cerr := prog.openInterp(); cerr != nil {
			b.Fatal(cerr)
		}
		for _, kv := range req.Env {
			if r := st.Caller.Grants.EnvAllowed(kv); r != "" {
				b.Fatal(r)
			}
		}
		closeOnExecAbove2()
		prog.close()
	}
}
