package hostcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// DefaultPath is the PATH used to find a bare argv[0] when the request's
// environment has none (CCM's child PATH).
const DefaultPath = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"

// waitDelay is how long a finished command's output pipes stay open for
// children it left behind (e.g. "daemon &") before they are closed, so such
// a child cannot hold the host's call open.
const waitDelay = time.Second

func execCall(ctx context.Context, st *State, req abi.ExecRequest) (any, *abi.CallError) {
	resp, cerr := Exec(ctx, st, req)
	if cerr != nil {
		return nil, cerr
	}
	return resp, nil
}

// Exec checks and runs one command (for ccm_exec and Host.Exec).
// Every exec of the host passes here (plugin execs, the exec type and its
// guards, health checks, probes): the program is resolved and opened once,
// the grant is matched on what was opened, every environment entry passes
// the env rule, and the child runs that open file, never the name again
// (docs/security.md, "Exec").
func Exec(ctx context.Context, st *State, req abi.ExecRequest) (abi.ExecResponse, *abi.CallError) {
	argv, name, cerr := execTarget(req)
	if cerr != nil {
		return abi.ExecResponse{}, cerr
	}
	if req.TimeoutMS < 0 {
		return abi.ExecResponse{}, invalid("timeout_ms %d is negative", req.TimeoutMS)
	}
	prog, cerr := openProgram(name, envPath(req.Env))
	if cerr != nil {
		return abi.ExecResponse{}, cerr
	}
	defer prog.close()
	if cerr := allowed(st, access{call: abi.CallExec, path: name, target: prog.path, exec: &req}); cerr != nil {
		return abi.ExecResponse{}, cerr
	}
	if cerr := prog.openInterp(); cerr != nil {
		return abi.ExecResponse{}, cerr
	}
	if prog.interp != nil {
		if cerr := allowed(st, access{call: abi.CallExec, path: prog.interpName + " (the #! interpreter of " + prog.path + ")", target: prog.interp.path, exec: &req, interp: true}); cerr != nil {
			return abi.ExecResponse{}, cerr
		}
	}
	for _, kv := range req.Env {
		if rule := st.Caller.Grants.EnvAllowed(kv); rule != "" {
			return abi.ExecResponse{}, denied("environment of %s refused: %s", prog.path, rule)
		}
	}
	cwd, cerr := execCwd(st, req.Cwd)
	if cerr != nil {
		return abi.ExecResponse{}, cerr
	}
	maxOut := st.ExecOutputBytes
	if req.MaxOutput > 0 && req.MaxOutput < maxOut {
		maxOut = req.MaxOutput
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout > 0 && st.Runtime != nil {
		// The command is bounded by its own timeout: its running time does not
		// eat into the plugin's call_timeout (see host.Limits.CallTimeout).
		st.Runtime.ExtendDeadline(timeout)
		start := time.Now()
		defer func() { st.Runtime.ExtendDeadline(time.Since(start) - timeout) }()
	}
	// Test builds only (testhooks_on.go): run a fake in place of the
	// approved program; the check above saw the real path.
	if to, extraEnv := testExecRedirect(prog.path); to != prog.path {
		return runCommand(ctx, to, argv, append(req.Env[:len(req.Env):len(req.Env)], extraEnv...), cwd, req.Stdin, timeout, maxOut)
	}
	path, argv := prog.command(argv)
	return runCommand(ctx, path, argv, req.Env, cwd, req.Stdin, timeout, maxOut)
}

// execCwd checks the working directory: "/" when unset; any other must be
// an absolute, clean directory the caller may read (fs_read on its resolved
// path), so a probe for existence goes through the grant like any read.
func execCwd(st *State, cwd string) (string, *abi.CallError) {
	if cwd == "" || cwd == "/" {
		return "/", nil
	}
	if cerr := checkClean(cwd); cerr != nil {
		return "", invalid("cwd: %s", cerr.Message)
	}
	resolved, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		resolved = cwd
	}
	if cerr := allowed(st, access{call: abi.CallFSStat, path: cwd, target: resolved}); cerr != nil {
		return "", denied("cwd %s: %s", cwd, cerr.Message)
	}
	// A missing working directory makes the start fail with ENOENT, which
	// would otherwise read as if the program were missing.
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", &abi.CallError{Code: abi.CodeNotFound, Message: fmt.Sprintf("working directory %s does not exist or is not a directory", cwd)}
	}
	return resolved, nil
}

// execTarget returns the argv to run and the program as written: /bin/sh
// for a shell command, else argv[0] (absolute, or a bare name looked up in
// the request's PATH).
func execTarget(req abi.ExecRequest) ([]string, string, *abi.CallError) {
	if req.Shell {
		if req.Command == "" || len(req.Argv) > 0 {
			return nil, "", invalid("a shell exec needs command and no argv")
		}
		return []string{"/bin/sh", "-c", req.Command}, "/bin/sh", nil
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, "", invalid("exec needs argv (or shell with command)")
	}
	if req.Command != "" {
		return nil, "", invalid("command is only used with shell; give argv alone")
	}
	name := req.Argv[0]
	if strings.Contains(name, "/") {
		if cerr := checkClean(name); cerr != nil {
			return nil, "", invalid("argv[0]: %s; give an absolute path or a bare name looked up in PATH", cerr.Message)
		}
	}
	return req.Argv, name, nil
}

// envPath is the last PATH= of env, or DefaultPath.
func envPath(env []string) string {
	path, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true
		}
	}
	if !found {
		return DefaultPath
	}
	return path
}

// lookPath finds name in the absolute directories of path (relative entries
// are skipped: they would depend on the cwd).
func lookPath(name, path string) (string, *abi.CallError) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		cand := filepath.Join(dir, name)
		if testRedirected(cand) {
			return cand, nil
		}
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", &abi.CallError{Code: abi.CodeNotFound, Message: fmt.Sprintf("executable %q not found in PATH %s", name, path)}
}

// runCommand runs exe with exactly env, in its own process group, killing
// the whole group when timeout (or ctx) ends it.
func runCommand(ctx context.Context, exe string, argv, env []string, cwd string, stdin []byte, timeout time.Duration, maxOut int64) (abi.ExecResponse, *abi.CallError) {
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stdout, stderr := &capWriter{max: maxOut}, &capWriter{max: maxOut}
	cmd := exec.CommandContext(cctx, exe)
	cmd.Path, cmd.Err = exe, nil // never looked up again by name
	cmd.Args = argv
	cmd.Env = append([]string{}, env...) // non-nil: nothing inherited from the host
	cmd.Dir = cwd
	if len(stdin) > 0 {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay

	// The child gets 0, 1 and 2 only: every other descriptor of this
	// process, also one it inherited, is close-on-exec.
	closeOnExecAbove2()
	err := cmd.Run()
	resp := abi.ExecResponse{
		Stdout:    stdout.buf.String(),
		Stderr:    stderr.buf.String(),
		Truncated: stdout.truncated || stderr.truncated,
		TimedOut:  cctx.Err() != nil,
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		resp.ExitCode = cmd.ProcessState.ExitCode()
	case errors.As(err, &exitErr):
		resp.ExitCode = exitCode(exitErr.ProcessState)
	default:
		return abi.ExecResponse{}, osError("start", exe, err)
	}
	return resp, nil
}

// exitCode is the exit status, or 128+signal for a killed process (the
// shell's convention), so it is never the ambiguous -1.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// capWriter keeps the first max bytes and drains the rest, so a chatty
// command neither blocks on a full pipe nor grows the host's memory.
type capWriter struct {
	max       int64
	buf       bytes.Buffer
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - int64(w.buf.Len())
	if int64(len(p)) > room {
		w.truncated = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}
