package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
		{name: "health check in health-check mode", caller: trust.Caller{Mode: trust.ModeHealthCheck, Grants: trust.Chain{{Exec: []string{resolvedSh(t)}}}},
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

// resolvedSh is /bin/sh with every symlink resolved: what an exec grant is
// matched on (on Debian, /usr/bin/dash).
func resolvedSh(t *testing.T) string {
	t.Helper()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// TestExecProgramPinned: a script runs its checked interpreter with its
// resolved path as $0's argument; a symlink to it is matched on its
// target; an inherited descriptor (fd 9 here, not close-on-exec) never
// reaches the child, which holds 0, 1 and 2 only.
func TestExecProgramPinned(t *testing.T) {
	h := sharedHost(t)
	dir, err := filepath.EvalSymlinks(tempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "s.sh")
	fds := filepath.Join(dir, "fds")
	mustWrite(t, script, "#!/bin/sh -e\necho \"$0\"; exec ls -l /proc/self/fd/ > "+fds+"\n", 0o755)
	secret := filepath.Join(dir, "secret")
	mustWrite(t, secret, "x", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Dup2(int(f.Fd()), 9); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(9)
	caller := trust.Caller{Grants: trust.Chain{{Exec: []string{script, resolvedSh(t)}}}}
	out, err := h.Exec(context.Background(), caller, abi.ExecRequest{Argv: []string{link}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != script+"\n" {
		t.Fatalf("stdout %q, want the resolved script (stderr %q)", out.Stdout, out.Stderr)
	}
	listing, err := os.ReadFile(fds)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(listing)), "\n")[1:] {
		fields := strings.Fields(line)
		fd, target := fields[len(fields)-3], fields[len(fields)-1]
		// ls holds the directory it lists on 3.
		if fd != "0" && fd != "1" && fd != "2" && (fd != "3" || !strings.HasPrefix(target, "/proc/")) {
			t.Errorf("the child holds fd %s -> %s", fd, target)
		}
	}
	caller.Grants = trust.Chain{{Exec: []string{link, resolvedSh(t)}}}
	if _, err := h.Exec(context.Background(), caller, abi.ExecRequest{Argv: []string{link}}); err == nil || !strings.Contains(err.Error(), "exec not granted for "+link+" (resolved to "+script+")") {
		t.Fatalf("grant on the link: %v", err)
	}
}
