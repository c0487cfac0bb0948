package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// execRow is one case of the decision table and properties of
// docs/resources.md, run twice: in noop on a read-only host (same decision, nothing run but
// probes, nothing changed) and for real. DIR in any string property stands
// for the case's temporary directory; most commands touch DIR/ran.
type execRow struct {
	name     string
	props    map[string]any // "name" is the resource name
	provider string
	refresh  bool
	setup    func(t *testing.T, dir string)
	// noop is the expected noop message; "" means the command must not run.
	noop      string
	wantErr   string // expected error, noop and real run alike
	runErr    string // expected error of the real run only
	noopErr   string // expected error of noop only: a predicted failure
	refreshed bool
	check     func(t *testing.T, dir string, res abi.Result, h *fakehost.Host)
	// grants is the scope's grant chain (nil: the unconfined root).
	grants trust.Chain
}

const touch = "/usr/bin/touch DIR/ran"

func execRows() []execRow {
	return []execRow{
		{name: "plain command runs", props: map[string]any{"name": "t", "command": touch}, noop: "Would have executed"},
		{name: "name is the command", props: map[string]any{"name": touch}, noop: "Would have executed"},
		{
			name:    "refresh runs despite creates, guards and refreshonly",
			props:   map[string]any{"name": "t", "command": touch, "creates": "DIR", "onlyif": "/bin/false", "unless": "/bin/true", "refreshonly": true},
			refresh: true, noop: "Would have executed via subscribe", refreshed: true,
		},
		{
			name:  "creates exists: stable and guards not run",
			props: map[string]any{"name": "t", "command": touch, "creates": "DIR/marker", "onlyif": "/usr/bin/touch DIR/guard-ran"},
			setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "marker")) },
			check: func(t *testing.T, dir string, res abi.Result, _ *fakehost.Host) {
				wantMissing(t, filepath.Join(dir, "guard-ran"))
				wantMessage(t, res, "not run: creates "+dir+"/marker exists")
			},
		},
		{
			name:  "creates as a dangling symlink counts as existing",
			props: map[string]any{"name": "t", "command": touch, "creates": "DIR/link"},
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{name: "creates missing runs", props: map[string]any{"name": "t", "command": touch, "creates": "DIR/marker"}, noop: "Would have executed"},
		{
			name:  "onlyif non-zero: stable",
			props: map[string]any{"name": "t", "command": touch, "onlyif": "/bin/sh -c 'exit 3'"},
			check: func(t *testing.T, _ string, res abi.Result, _ *fakehost.Host) {
				wantMessage(t, res, `not run: onlyif "/bin/sh -c 'exit 3'" exited 3`)
			},
		},
		{name: "onlyif zero runs", props: map[string]any{"name": "t", "command": touch, "onlyif": "test -d DIR"}, noop: "Would have executed"},
		{name: "unless zero: stable", props: map[string]any{"name": "t", "command": touch, "unless": "test -d DIR"}},
		{name: "unless non-zero runs", props: map[string]any{"name": "t", "command": touch, "unless": "test -e DIR/nothing"}, noop: "Would have executed"},
		{
			name:  "onlyif zero then unless zero: stable",
			props: map[string]any{"name": "t", "command": touch, "onlyif": "/bin/true", "unless": "/bin/true"},
		},
		{
			name:  "refreshonly without refresh: stable",
			props: map[string]any{"name": "t", "command": touch, "refreshonly": true},
			check: func(t *testing.T, _ string, res abi.Result, _ *fakehost.Host) {
				wantMessage(t, res, "not run: refreshonly is set and no subscribed resource changed")
			},
		},
		{name: "refresh_only spelling: stable", props: map[string]any{"name": "t", "command": touch, "refresh_only": true}},
		{
			name:    "refresh_only with refresh runs",
			props:   map[string]any{"name": "t", "command": touch, "refresh_only": true},
			refresh: true, noop: "Would have executed via subscribe", refreshed: true,
		},
		{
			name:   "exit code not in returns fails with stderr",
			props:  map[string]any{"name": "t", "command": "/bin/sh -c 'echo out; echo oops >&2; exit 3'"},
			noop:   "Would have executed",
			runErr: "exit code 3 not in allowed returns [0]",
			check: func(t *testing.T, _ string, res abi.Result, _ *fakehost.Host) {
				if !slices.Equal(res.Messages, []string{"oops"}) {
					t.Fatalf("messages %q, want the stderr tail", res.Messages)
				}
				if meta := res.State["metadata"].(map[string]any); meta["exit_code"] != 3 {
					t.Fatalf("state %v", res.State)
				}
			},
		},
		{
			name:   "stdout tail when stderr is empty, at most 10 lines",
			props:  map[string]any{"name": "t", "command": "/usr/bin/seq 20", "returns": []any{float64(1)}},
			noop:   "Would have executed",
			runErr: "exit code 0 not in allowed returns [1]",
			check: func(t *testing.T, _ string, res abi.Result, _ *fakehost.Host) {
				if len(res.Messages) != 10 || res.Messages[0] != "11" || res.Messages[9] != "20" {
					t.Fatalf("messages %q", res.Messages)
				}
			},
		},
		{
			name:  "exit code in returns succeeds",
			props: map[string]any{"name": "t", "command": "/bin/sh -c 'touch DIR/ran; exit 3'", "returns": []any{float64(0), float64(3)}},
			noop:  "Would have executed",
		},
		{
			name:   "timeout kills the command",
			props:  map[string]any{"name": "t", "command": "/bin/sleep 5", "timeout": "200ms"},
			noop:   "Would have executed",
			runErr: "command timed out after 200ms (the timeout property); its process group was killed",
		},
		{
			name:    "guard timeout fails the resource",
			props:   map[string]any{"name": "t", "command": touch, "onlyif": "/bin/sleep 5", "timeout": "200ms"},
			wantErr: `onlyif guard "/bin/sleep 5" timed out after 200ms`,
		},
		{
			name:    "guard that cannot start fails the resource",
			props:   map[string]any{"name": "t", "command": touch, "unless": "/nonexistent/probe"},
			wantErr: `unless guard "/nonexistent/probe" could not run: not_found`,
		},
		{
			name:    "command that cannot start fails",
			props:   map[string]any{"name": "t", "command": "no-such-program-ccm --x"},
			noopErr: `the real run would fail to run "no-such-program-ccm --x": program "no-such-program-ccm" not found in PATH /usr/bin:`,
			runErr:  `running "no-such-program-ccm --x": not_found`,
		},
		{
			name:    "absolute program that does not exist fails, noop too",
			props:   map[string]any{"name": "t", "command": "/usr/bin/no-such-program-ccm"},
			noopErr: `the real run would fail to run "/usr/bin/no-such-program-ccm": program /usr/bin/no-such-program-ccm does not exist or is not executable`,
			runErr:  `running "/usr/bin/no-such-program-ccm": not_found`,
		},
		{
			name:     "a shell line is not predicted",
			props:    map[string]any{"name": "t", "command": "no-such-program-ccm"},
			provider: "shell",
			noop:     "Would have executed",
			runErr:   "exit code 127 not in allowed returns [0]",
		},
		{
			name:  "clean environment with overrides, logged with logoutput",
			props: map[string]any{"name": "t", "command": "env", "logoutput": true, "environment": []any{"FOO=bar baz", "LANG=en_US.UTF-8"}},
			noop:  "Would have executed",
			check: func(t *testing.T, _ string, _ abi.Result, h *fakehost.Host) {
				wantLogs(t, h, "PATH="+defaultPath, "LANG=en_US.UTF-8", "LC_ALL=C", "FOO=bar baz")
			},
		},
		{
			name:  "path finds programs and is exported",
			props: map[string]any{"name": "t", "command": "mytool", "path": "DIR/bin:/usr/bin:/bin", "logoutput": true},
			setup: func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				script := "#!/bin/sh\necho \"PATH=$PATH\"\n"
				if err := os.WriteFile(filepath.Join(dir, "bin", "mytool"), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			noop: "Would have executed",
			// A PATH beyond the system directories needs an env grant.
			grants: trust.Chain{trust.Grant{Exec: []string{"/**"}, FSRead: []string{"/**"}, Env: []string{"PATH", "*"}}},
			check: func(t *testing.T, dir string, _ abi.Result, h *fakehost.Host) {
				wantLogs(t, h, "PATH="+dir+"/bin:/usr/bin:/bin")
			},
		},
		{
			name:   "path beyond the system directories without an env grant is refused",
			props:  map[string]any{"name": "t", "command": "/usr/bin/true", "path": "DIR/bin:/usr/bin:/bin"},
			noop:   "Would have executed",
			runErr: `PATH can make the program load or run other code; it runs only with an env entry "PATH"`,
		},
		{
			name:  "cwd defaults to /",
			props: map[string]any{"name": "pwd", "logoutput": true},
			noop:  "Would have executed",
			check: func(t *testing.T, _ string, _ abi.Result, h *fakehost.Host) { wantLogs(t, h, "/") },
		},
		{
			name:  "cwd is used by command and guards",
			props: map[string]any{"name": "t", "command": "/usr/bin/touch ran", "cwd": "DIR", "onlyif": "test -e guardfile", "unless": "test -e ran"},
			setup: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "guardfile")) },
			noop:  "Would have executed",
		},
		{
			name:  "posix quoting keeps spaces in arguments",
			props: map[string]any{"name": "t", "command": `/usr/bin/touch "DIR/with space" 'DIR/ran'`},
			noop:  "Would have executed",
			check: func(t *testing.T, dir string, _ abi.Result, _ *fakehost.Host) {
				if _, err := os.Stat(filepath.Join(dir, "with space")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:     "shell provider runs through /bin/sh",
			props:    map[string]any{"name": "t", "command": "cd DIR && echo x > ran", "onlyif": "test -d DIR && true"},
			provider: "shell",
			noop:     "Would have executed",
		},
		{
			name:     "shell provider guard is a shell line too",
			props:    map[string]any{"name": "t", "command": touch, "unless": "test -d DIR || false"},
			provider: "shell",
		},
		{
			name:    "invalid final properties fail before anything runs",
			props:   map[string]any{"name": "t", "command": `echo "unterminated`, "onlyif": "/usr/bin/touch DIR/guard-ran"},
			wantErr: `invalid properties: command "echo \"unterminated": unterminated quote or escape`,
			check: func(t *testing.T, dir string, _ abi.Result, _ *fakehost.Host) {
				wantMissing(t, filepath.Join(dir, "guard-ran"))
			},
		},
	}
}

func TestApplyDecisionTable(t *testing.T) {
	for _, row := range execRows() {
		t.Run(row.name, func(t *testing.T) {
			t.Run("noop", func(t *testing.T) {
				dir := t.TempDir()
				if row.setup != nil {
					row.setup(t, dir)
				}
				req := request(row, dir)
				req.Noop = true
				// The host reads the guards from the resource's properties.
				h := &fakehost.Host{Info: info, ReadOnly: true, Properties: req.Properties, Grants: row.grants}
				var res abi.Result
				noMutation(t, dir, func() { res = (&execType{}).Apply(h, req) })
				want := row.wantErr
				if row.noopErr != "" {
					want = row.noopErr
				}
				wantError(t, res.Error, want)
				if want != "" {
					return
				}
				if res.Changed != (row.noop != "") || res.NoopMessage != row.noop || res.Refreshed != row.refreshed {
					t.Fatalf("noop: %+v; want message %q refreshed %v", res, row.noop, row.refreshed)
				}
				for _, c := range h.Calls() {
					if c == abi.CallLog {
						t.Fatalf("noop logged command output: %v", h.Logs())
					}
				}
			})
			t.Run("apply", func(t *testing.T) {
				dir := t.TempDir()
				if row.setup != nil {
					row.setup(t, dir)
				}
				h := &fakehost.Host{Info: info, Grants: row.grants}
				start := time.Now()
				res := (&execType{}).Apply(h, request(row, dir))
				if took := time.Since(start); took > 3*time.Second {
					t.Fatalf("apply took %v", took)
				}
				wantErr := row.wantErr + row.runErr
				wantError(t, res.Error, wantErr)
				if row.check != nil {
					defer row.check(t, dir, res, h)
				}
				if wantErr != "" {
					if res.Changed {
						t.Fatalf("a failed resource reported changed: %+v", res)
					}
					return
				}
				ran := row.noop != ""
				if res.Changed != ran || res.Refreshed != row.refreshed || res.NoopMessage != "" || res.FinalEnsure != "present" {
					t.Fatalf("apply: %+v; want changed %v refreshed %v", res, ran, row.refreshed)
				}
				if want := map[bool]string{false: "posix", true: "shell"}[row.provider == "shell"]; res.Provider != want {
					t.Fatalf("provider %q, want %q", res.Provider, want)
				}
				if usesMarker(row) {
					_, err := os.Stat(filepath.Join(dir, "ran"))
					if ran != (err == nil) {
						t.Fatalf("command ran=%v, want %v", err == nil, ran)
					}
				}
			})
		})
	}
}

// TestApplyNoopRunsOnlyProbes: guards are sent as probes, the command never.
func TestApplyNoopRunsOnlyProbes(t *testing.T) {
	dir := t.TempDir()
	req := request(execRow{props: map[string]any{"name": "t", "command": touch, "onlyif": "/bin/true", "unless": "/bin/false"}}, dir)
	req.Noop = true
	h := &probeRecorder{Host: &fakehost.Host{Info: info, ReadOnly: true, Properties: req.Properties}}
	res := (&execType{}).Apply(h, req)
	if res.Error != "" || res.NoopMessage != "Would have executed" {
		t.Fatalf("%+v", res)
	}
	if !slices.Equal(h.probes, []bool{true, true}) {
		t.Fatalf("exec calls (probe flags) %v, want two probes", h.probes)
	}
}

// TestApplyExecRequest pins what reaches ccm_exec for each provider.
func TestApplyExecRequest(t *testing.T) {
	cases := []struct {
		name     string
		provider string
		want     abi.ExecRequest
	}{
		{"posix", "", abi.ExecRequest{
			Argv: []string{"/bin/echo", "a b"}, Cwd: "/tmp", TimeoutMS: 90_000,
			Env: []string{"PATH=/opt/bin", "LANG=C", "LC_ALL=C", "X=1"},
		}},
		{"shell", "shell", abi.ExecRequest{
			Shell: true, Command: `/bin/echo "a b"`, Cwd: "/tmp", TimeoutMS: 90_000,
			Env: []string{"PATH=/opt/bin", "LANG=C", "LC_ALL=C", "X=1"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &probeRecorder{Host: &fakehost.Host{Info: info}}
			(&execType{}).Apply(h, abi.Request{Name: "t", Provider: tc.provider, Properties: map[string]any{
				"command": `/bin/echo "a b"`, "cwd": "/tmp", "timeout": "1m30s", "path": "/opt/bin", "environment": []any{"X=1"},
			}})
			if len(h.reqs) != 1 {
				t.Fatalf("exec calls %d", len(h.reqs))
			}
			got := h.reqs[0]
			if !slices.Equal(got.Argv, tc.want.Argv) || got.Shell != tc.want.Shell || got.Command != tc.want.Command ||
				got.Cwd != tc.want.Cwd || got.TimeoutMS != tc.want.TimeoutMS || !slices.Equal(got.Env, tc.want.Env) || got.Probe {
				t.Fatalf("request %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	h := &fakehost.Host{Info: info, ReadOnly: true}
	resp := (&execType{}).Status(h, abi.Request{Name: "t", Provider: "shell"})
	meta := resp.State["metadata"].(map[string]any)
	if resp.Error != "" || resp.FinalEnsure != "present" || resp.Provider != "shell" || meta["name"] != "t" ||
		resp.State["protocol"] != "io.choria.ccm.v1.resource.exec.state" || len(h.Calls()) != 0 {
		t.Fatalf("%+v, calls %v", resp, h.Calls())
	}
	if _, ok := meta["exit_code"]; ok {
		t.Fatalf("status reports an exit code: %v", meta)
	}
}

// TestNoopPredictionStops: once a change could have installed the program
// (another type's, or an earlier exec of the run), noop no longer fails a
// command whose program is missing.
func TestNoopPredictionStops(t *testing.T) {
	missing := abi.Request{Type: "exec", Name: "t", Noop: true, WorkingDir: "/",
		Properties: map[string]any{"name": "t", "command": "/usr/bin/no-such-program-ccm"}}
	e := &execType{}
	if res := e.Apply(&fakehost.Host{Info: info, ReadOnly: true}, missing); res.Error == "" {
		t.Fatalf("missing program predicted nothing: %+v", res)
	}
	after := missing
	after.AfterChanges = true
	if res := e.Apply(&fakehost.Host{Info: info, ReadOnly: true}, after); res.Error != "" || !res.Changed {
		t.Fatalf("after another type's change: %+v, want a plain would-run", res)
	}
	e = &execType{}
	ran := missing
	ran.Properties = map[string]any{"name": "t", "command": "/usr/bin/true"}
	if res := e.Apply(&fakehost.Host{Info: info, ReadOnly: true}, ran); !res.Changed {
		t.Fatalf("true: %+v", res)
	}
	if res := e.Apply(&fakehost.Host{Info: info, ReadOnly: true}, missing); res.Error != "" || !res.Changed {
		t.Fatalf("after an earlier exec would have run: %+v, want a plain would-run", res)
	}
}
