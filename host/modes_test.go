package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestModesRefuseMutations runs every mutating host call in every mode:
// apply mode performs it, the read-only modes refuse it and leave the
// directory as it was, whatever the request claims.
func TestModesRefuseMutations(t *testing.T) {
	h := sharedHost(t)
	calls := []struct {
		name string
		call func(dir string) hc
	}{
		{name: "write", call: func(dir string) hc {
			return hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "new"), Content: []byte("x"), Mode: 0o644}}
		}},
		{name: "mkdir", call: func(dir string) hc {
			return hc{abi.CallFSMkdir, abi.FSMkdirRequest{Path: filepath.Join(dir, "new"), Mode: 0o755}}
		}},
		{name: "remove", call: func(dir string) hc { return hc{abi.CallFSRemove, abi.FSRemoveRequest{Path: filepath.Join(dir, "f")}} }},
		{name: "chown", call: func(dir string) hc {
			return hc{abi.CallFSChown, abi.FSChownRequest{Path: filepath.Join(dir, "f"), Owner: "55"}}
		}},
		{name: "chmod", call: func(dir string) hc {
			return hc{abi.CallFSChmod, abi.FSChmodRequest{Path: filepath.Join(dir, "f"), Mode: 0o600}}
		}},
	}
	modes := []struct {
		name   string
		mode   trust.Mode
		noop   bool // set in the request, with an apply-mode caller
		status bool // through ccm_status
		denied string
	}{
		{name: "apply", mode: trust.ModeApply},
		{name: "noop", mode: trust.ModeNoop, denied: "noop mode is read-only"},
		{name: "noop request, apply caller", mode: trust.ModeApply, noop: true, denied: "noop mode is read-only"},
		{name: "health-check", mode: trust.ModeHealthCheck, denied: "health-check-only mode is read-only"},
		{name: "status", mode: trust.ModeApply, status: true, denied: "status mode is read-only"},
	}
	for _, c := range calls {
		for _, m := range modes {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				dir := tempDir(t)
				mustWrite(t, filepath.Join(dir, "f"), "x", 0o644)
				before := snapshot(t, dir)
				caller := trust.Caller{Grants: grantDir(t, dir), Mode: m.mode}
				req := abi.Request{Type: "probe", Name: "t", Noop: m.noop, Properties: map[string]any{"calls": toAny(t, []hc{c.call(dir)})}}
				var state map[string]any
				if m.status {
					res, err := h.Status(context.Background(), caller, req)
					if err != nil || res.Error != "" {
						t.Fatalf("Status: %v %s", err, res.Error)
					}
					state = res.State
				} else {
					res, err := h.Apply(context.Background(), caller, req)
					if err != nil || res.Error != "" {
						t.Fatalf("Apply: %v %s", err, res.Error)
					}
					state = res.State
				}
				r := responses(t, state)[0]
				if m.denied == "" {
					okInto(t, r, nil)
					if snapshot(t, dir) == before {
						t.Fatal("apply mode changed nothing")
					}
					return
				}
				wantCode(t, r, abi.CodeDenied, m.denied)
				if after := snapshot(t, dir); after != before {
					t.Fatalf("a refused call changed the directory:\n%s\n%s", before, after)
				}
			})
		}
	}
}

// snapshot describes dir's entries (name, mode, owner) for comparison.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var out string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out += p + " " + fi.Mode().String() + " " + "uid=" + strconv.FormatUint(uint64(statT(fi).Uid), 10) + "\n"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadOnlyExecProbes checks the probe rule of read-only modes: only a
// probe whose command the manifest wrote, or that starts with one of the
// plugin's probe_exec prefixes, runs.
func TestReadOnlyExecProbes(t *testing.T) {
	h := sharedHost(t)
	caller := trust.Caller{Grants: trust.Chain{trust.All()}, Mode: trust.ModeNoop}
	tests := []struct {
		name   string
		req    abi.ExecRequest
		denied bool
	}{
		{name: "guard from a property", req: abi.ExecRequest{Argv: []string{"test", "-d", "/"}, Probe: true}},
		{name: "quoted guard from a property", req: abi.ExecRequest{Argv: []string{"test", "-n", "a b"}, Probe: true}},
		{name: "shell guard from a property", req: abi.ExecRequest{Shell: true, Command: "test -d / && true", Probe: true}},
		{name: "probe_exec prefix", req: abi.ExecRequest{Argv: []string{"id", "-u"}, Probe: true}},
		{name: "probe_exec prefix with more args", req: abi.ExecRequest{Argv: []string{"/usr/bin/id", "-u", "root"}, Probe: true}},
		{name: "not marked probe", req: abi.ExecRequest{Argv: []string{"test", "-d", "/"}}, denied: true},
		{name: "unknown command", req: abi.ExecRequest{Argv: []string{"true"}, Probe: true}, denied: true},
		{name: "prefix does not cover shell", req: abi.ExecRequest{Shell: true, Command: "/usr/bin/id -u; touch /x", Probe: true}, denied: true},
		{name: "prefix must match whole words", req: abi.ExecRequest{Argv: []string{"id", "-un"}, Probe: true}, denied: true},
		{name: "a property not declared a guard", req: abi.ExecRequest{Argv: []string{"test", "-e", "/"}, Probe: true}, denied: true},
		{name: "extra argument after guard", req: abi.ExecRequest{Argv: []string{"test", "-d", "/", "-o", "x"}, Probe: true}, denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Apply(context.Background(), caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{
				"onlyif":  "test -d /",
				"unless":  []any{`test -n "a b"`},
				"command": "test -d / && true",
				"other":   "test -e /",
				"calls":   toAny(t, []hc{{abi.CallExec, tt.req}}),
			}})
			if err != nil || res.Error != "" {
				t.Fatalf("Apply: %v %s", err, res.Error)
			}
			r := responses(t, res.State)[0]
			if tt.denied {
				wantCode(t, r, abi.CodeDenied, "noop mode runs only probes")
				return
			}
			var got abi.ExecResponse
			okInto(t, r, &got)
			if got.ExitCode != 0 {
				t.Fatalf("exit code %d: %+v", got.ExitCode, got)
			}
		})
	}
}

func TestApplyModeReachesPlugin(t *testing.T) {
	h := sharedHost(t)
	tests := []struct {
		name   string
		mode   trust.Mode
		req    abi.Request
		noop   bool
		health bool
	}{
		{name: "noop caller sets noop", mode: trust.ModeNoop, noop: true},
		{name: "health-check caller sets health_check_only", mode: trust.ModeHealthCheck, health: true},
		{name: "apply caller keeps request", mode: trust.ModeApply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Apply(context.Background(), trust.Caller{Mode: tt.mode}, abi.Request{Type: "probe", Name: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if res.State["noop"] != tt.noop || res.State["health_check_only"] != tt.health {
				t.Fatalf("plugin saw %v", res.State)
			}
		})
	}
}

// TestThirdPartyProbes: a registered (third-party) plugin's own probe_exec
// and guards are not enough in a read-only mode; its probe runs only when
// every grant of the chain has a matching probe_exec entry.
func TestThirdPartyProbes(t *testing.T) {
	t.Parallel()
	h := newBareHost(t)
	ctx := context.Background()
	id, _, err := h.Register(ctx, trust.Caller{}, probeFile(t, tempDir(t), "vendor.wasm"), probeSum())
	if err != nil {
		t.Fatal(err)
	}
	idProbe := abi.ExecRequest{Argv: []string{"/usr/bin/id", "-u"}, Probe: true}
	guard := abi.ExecRequest{Argv: []string{"test", "-d", "/"}, Probe: true}
	vouched := trust.Grant{Exec: []string{"/usr/bin/*"}, ProbeExec: []string{"/usr/bin/id -u"}}
	tests := []struct {
		name  string
		chain trust.Chain
		req   abi.ExecRequest
		want  string // "" runs
	}{
		{"plugin's own probe_exec, not vouched", trust.Chain{{Exec: []string{"/usr/bin/*"}}}, idProbe, "grant 1 of 1 has none for /usr/bin/id -u"},
		{"vouched by the grant", trust.Chain{vouched}, idProbe, ""},
		{"vouched by one grant of two", trust.Chain{vouched, {Exec: []string{"/usr/bin/*"}}}, idProbe, "grant 2 of 2 has none"},
		{"vouched by both", trust.Chain{vouched, vouched}, idProbe, ""},
		{"a third-party guard is not honoured", trust.Chain{vouched}, guard, "neither a built-in type's guard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Apply(ctx, trust.Caller{Plugin: id, Grants: tt.chain, Mode: trust.ModeNoop}, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{
				"onlyif": "test -d /",
				"calls":  toAny(t, []hc{{abi.CallExec, tt.req}}),
			}})
			if err != nil || res.Error != "" {
				t.Fatalf("Apply: %v %s", err, res.Error)
			}
			r := responses(t, res.State)[0]
			if tt.want != "" {
				wantCode(t, r, abi.CodeDenied, tt.want)
				return
			}
			okInto(t, r, nil)
		})
	}
}
