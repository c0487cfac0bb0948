package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestExec(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: trust.Chain{trust.All()}}
	tests := []struct {
		name string
		req  abi.ExecRequest
		want abi.ExecResponse
		code string
	}{
		{name: "exact environment", req: abi.ExecRequest{Argv: []string{"/usr/bin/env"}, Env: []string{"A=1", "PATH=/usr/bin"}},
			want: abi.ExecResponse{Stdout: "A=1\nPATH=/usr/bin\n"}},
		{name: "empty environment", req: abi.ExecRequest{Argv: []string{"/usr/bin/env"}}, want: abi.ExecResponse{}},
		{name: "default cwd is /", req: abi.ExecRequest{Argv: []string{"/bin/pwd"}}, want: abi.ExecResponse{Stdout: "/\n"}},
		{name: "cwd", req: abi.ExecRequest{Argv: []string{"/bin/pwd"}, Cwd: dir}, want: abi.ExecResponse{Stdout: dir + "\n"}},
		{name: "stdin", req: abi.ExecRequest{Argv: []string{"cat"}, Stdin: []byte("in put")}, want: abi.ExecResponse{Stdout: "in put"}},
		{name: "stderr and exit code", req: abi.ExecRequest{Shell: true, Command: "echo oops >&2; exit 3"},
			want: abi.ExecResponse{Stderr: "oops\n", ExitCode: 3}},
		{name: "killed by a signal", req: abi.ExecRequest{Shell: true, Command: "kill -9 $$"}, want: abi.ExecResponse{ExitCode: 137}},
		{name: "output capped per stream", req: abi.ExecRequest{Shell: true, Command: "yes | head -c 100000; echo err >&2", MaxOutput: 10},
			want: abi.ExecResponse{Stdout: "y\ny\ny\ny\ny\n", Stderr: "err\n", Truncated: true}},
		{name: "timeout", req: abi.ExecRequest{Argv: []string{"sleep", "30"}, TimeoutMS: 200}, want: abi.ExecResponse{ExitCode: 137, TimedOut: true}},
		{name: "relative cwd", req: abi.ExecRequest{Argv: []string{"true"}, Cwd: "tmp"}, code: abi.CodeInvalid},
		{name: "missing cwd", req: abi.ExecRequest{Argv: []string{"true"}, Cwd: filepath.Join(dir, "nope")}, code: abi.CodeNotFound},
		{name: "missing executable", req: abi.ExecRequest{Argv: []string{"/usr/bin/no-such-tool-ccm"}}, code: abi.CodeNotFound},
		{name: "argv and shell", req: abi.ExecRequest{Shell: true, Command: "true", Argv: []string{"true"}}, code: abi.CodeInvalid},
		{name: "nothing to run", req: abi.ExecRequest{}, code: abi.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(t, h, caller, hc{abi.CallExec, tt.req})[0]
			if tt.code != "" {
				wantCode(t, r, tt.code, "")
				return
			}
			var got abi.ExecResponse
			okInto(t, r, &got)
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestExecTimeoutKillsGroup checks that a timeout kills the command's whole
// process group, not only its leader.
func TestExecTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	pidFile := filepath.Join(tempDir(t), "pid")
	start := time.Now()
	r := apply(t, h, trust.Caller{Grants: trust.Chain{trust.All()}}, hc{abi.CallExec, abi.ExecRequest{
		Shell: true, Command: "sleep 30 & echo $! > " + pidFile + "; wait", TimeoutMS: 300,
	}})[0]
	var got abi.ExecResponse
	okInto(t, r, &got)
	if !got.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("got %+v after %v", got, time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitGone(t, pid)
}

// waitGone waits for pid to be gone (or a zombie nobody reaps, as under a
// container's PID 1).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d of the timed-out group is still running", pid)
}

// TestExecLeftoverChild checks that a child left behind holding the output
// pipes cannot hold the call open.
func TestExecLeftoverChild(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	start := time.Now()
	r := apply(t, h, trust.Caller{Grants: trust.Chain{trust.All()}}, hc{abi.CallExec, abi.ExecRequest{Shell: true, Command: "sleep 30 & echo started"}})[0]
	var got abi.ExecResponse
	okInto(t, r, &got)
	if got.Stdout != "started\n" || got.ExitCode != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("got %+v after %v", got, time.Since(start))
	}
}

func TestHostExec(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	tests := []struct {
		name   string
		caller trust.Caller
		req    abi.ExecRequest
		want   string
		err    string
	}{
		{name: "health check in health-check mode", caller: trust.Caller{Mode: trust.ModeHealthCheck, Grants: trust.Chain{{Exec: []string{"/bin/sh"}}}},
			req: abi.ExecRequest{Shell: true, Command: "echo OK"}, want: "OK\n"},
		{name: "not granted", caller: trust.Caller{Resource: "file#/x", Grants: trust.Chain{{Exec: []string{"/bin/sh"}}}},
			req: abi.ExecRequest{Argv: []string{"/usr/bin/id"}}, err: "file#/x: ccm_exec: denied: exec not granted for /usr/bin/id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.Exec(context.Background(), tt.caller, tt.req)
			if tt.err != "" {
				var cerr *abi.CallError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &cerr) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.Stdout != tt.want {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}
