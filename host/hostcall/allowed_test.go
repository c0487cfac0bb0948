package hostcall

import (
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestAllowed is the table of the one check: plugin capabilities ∩ grant
// chain, modes, and the calls that need no capability.
func TestAllowed(t *testing.T) {
	pluginCaps := &abi.Capabilities{
		FSRead:    []string{"/etc/**"},
		FSWrite:   []string{"/etc/app/**"},
		Exec:      []string{"/usr/bin/systemctl"},
		ProbeExec: []string{"/usr/bin/systemctl is-active"},
	}
	all := trust.Chain{trust.All()}
	netCaps := &abi.Capabilities{Net: []string{"GET https://*:*"}}
	tests := []struct {
		name   string
		st     State
		a      access
		denied string // "" = allowed
	}{
		{name: "inside caps and grant", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallFSWrite, path: "/etc/app/x", target: "/etc/app/x"}},
		{name: "zero chain grants all", st: State{Caps: pluginCaps, HostCalls: true},
			a: access{call: abi.CallFSRead, path: "/etc/passwd", target: "/etc/passwd"}},
		{name: "outside the plugin's caps", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallFSWrite, path: "/etc/passwd", target: "/etc/passwd"}, denied: "fs_write not granted for /etc/passwd: the plugin's capabilities do not request it"},
		{name: "outside the grant", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: trust.Chain{{FSWrite: []string{"/etc/app/a"}}}}, HostCalls: true},
			a: access{call: abi.CallFSChmod, path: "/etc/app/b", target: "/etc/app/b"}, denied: "fs_write not granted for /etc/app/b; add it to grants in the apply"},
		{name: "resolved path shown", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallFSStat, path: "/etc/link/x", target: "/var/x"}, denied: "fs_read not granted for /etc/link/x (resolved to /var/x)"},
		{name: "users not requested", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallUserLookup}, denied: "the plugin did not request users"},
		{name: "exec granted", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallExec, path: "systemctl", target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "restart", "x"}}}},
		{name: "exec probe in noop", st: State{Caps: pluginCaps, Builtin: true, Caller: trust.Caller{Grants: all, Mode: trust.ModeNoop}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "is-active", "x"}, Probe: true}}},
		{name: "a third-party plugin's probe_exec alone", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeNoop}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "is-active", "x"}, Probe: true}}, denied: "needs a matching probe_exec entry in every grant"},
		{name: "a third-party probe the grant vouches for", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: trust.Chain{{Exec: []string{"/usr/bin/systemctl"}, ProbeExec: []string{"/usr/bin/systemctl is-active"}}}, Mode: trust.ModeNoop}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "is-active", "x"}, Probe: true}}},
		{name: "exec mutation in noop", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeNoop}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "restart", "x"}, Probe: true}}, denied: "noop mode runs only probes"},
		{name: "probe still needs the grant", st: State{Caps: pluginCaps, Builtin: true, Caller: trust.Caller{Grants: trust.Chain{{}}, Mode: trust.ModeStatus}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/usr/bin/systemctl", exec: &abi.ExecRequest{Argv: []string{"systemctl", "is-active", "x"}, Probe: true}}, denied: "exec not granted"},
		{name: "engine exec in health-check mode", st: State{Caller: trust.Caller{Grants: all, Mode: trust.ModeHealthCheck}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/bin/sh", exec: &abi.ExecRequest{Shell: true, Command: "check"}}},
		{name: "engine exec needs the grant", st: State{Caller: trust.Caller{Grants: trust.Chain{{Exec: []string{"/usr/bin/*"}}}}, HostCalls: true},
			a: access{call: abi.CallExec, target: "/bin/sh"}, denied: "exec not granted for /bin/sh"},
		{name: "read in status mode", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeStatus}, HostCalls: true},
			a: access{call: abi.CallFSList, path: "/etc", target: "/etc"}},
		{name: "write in status mode", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeStatus}, HostCalls: true},
			a: access{call: abi.CallFSRemove, path: "/etc/app/x", target: "/etc/app/x"}, denied: "ccm_fs_remove refused for /etc/app/x: status mode is read-only"},
		{name: "no host calls in validate", st: State{Export: abi.ExportValidate, Caps: pluginCaps},
			a: access{call: abi.CallFSStat, path: "/etc/x", target: "/etc/x"}, denied: "ccm_fs_stat is not available during ccm_validate"},
		{name: "log in validate", st: State{Export: abi.ExportValidate}, a: access{call: abi.CallLog}},
		{name: "lookup with an empty grant", st: State{Caps: &abi.Capabilities{}, Caller: trust.Caller{Grants: trust.Chain{{}}}, HostCalls: true},
			a: access{call: abi.CallLookup}},
		{name: "net fetch granted", st: State{Caps: netCaps, Caller: trust.Caller{Grants: trust.Chain{{Net: []string{"https://dl.example.com"}}}}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a.tgz", target: "GET https://dl.example.com:443"}},
		{name: "net fetch outside the grant", st: State{Caps: netCaps, Caller: trust.Caller{Grants: trust.Chain{{Net: []string{"https://dl.example.com"}}}}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://evil.example/a.tgz", target: "GET https://evil.example:443"}, denied: "net not granted for https://evil.example/a.tgz (resolved to GET https://evil.example:443); add it to grants in the apply"},
		{name: "net fetch the plugin did not request", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a", target: "GET https://dl.example.com:443"}, denied: "the plugin's capabilities do not request it"},
		{name: "net fetch in noop", st: State{Caps: netCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeNoop}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a", target: "GET https://dl.example.com:443"}, denied: "noop mode is read-only"},
		{name: "net fetch in health-check mode", st: State{Caps: netCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeHealthCheck}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a", target: "GET https://dl.example.com:443"}, denied: "health-check-only mode is read-only"},
		{name: "net fetch in status mode", st: State{Caps: netCaps, Caller: trust.Caller{Grants: all, Mode: trust.ModeStatus}, HostCalls: true},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a", target: "GET https://dl.example.com:443"}, denied: "status mode is read-only"},
		{name: "net fetch in validate", st: State{Export: abi.ExportValidate, Caps: netCaps},
			a: access{call: abi.CallNetFetch, path: "https://dl.example.com/a", target: "GET https://dl.example.com:443"}, denied: "not available during ccm_validate"},
		{name: "unknown call", st: State{Caps: pluginCaps, Caller: trust.Caller{Grants: all}, HostCalls: true},
			a: access{call: "ccm_http_get", target: "/etc/x"}, denied: "not granted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cerr := allowed(&tt.st, tt.a)
			switch {
			case tt.denied == "" && cerr != nil:
				t.Fatalf("refused: %v", cerr)
			case tt.denied != "" && cerr == nil:
				t.Fatalf("allowed, want %q", tt.denied)
			case tt.denied != "" && (cerr.Code != abi.CodeDenied || !strings.Contains(cerr.Message, tt.denied)):
				t.Fatalf("got %v, want denied %q", cerr, tt.denied)
			}
		})
	}
}
