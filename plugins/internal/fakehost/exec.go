package fakehost

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Exec implements ccm_exec: exactly req.Env, cwd "/" by default, its own
// process group killed as a whole on timeout.
func (h *Host) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	if stop, err := h.begin(abi.CallExec); stop {
		return abi.ExecResponse{}, err
	}
	if h.ReadOnly && !req.Probe {
		return abi.ExecResponse{}, denied(abi.CallExec)
	}
	// The same request rules as the host's, so a plugin test cannot pass
	// with a request the host would refuse.
	argv := req.Argv
	switch {
	case req.Shell && (req.Command == "" || len(req.Argv) > 0):
		return abi.ExecResponse{}, callErr(abi.CodeInvalid, "a shell exec needs command and no argv")
	case req.Shell:
		argv = []string{"/bin/sh", "-c", req.Command}
	case req.Command != "":
		return abi.ExecResponse{}, callErr(abi.CodeInvalid, "command is only used with shell; give argv alone")
	case len(argv) == 0 || argv[0] == "":
		return abi.ExecResponse{}, callErr(abi.CodeInvalid, "exec needs argv (or shell with command)")
	}
	prog, err := lookPath(argv[0], req.Env)
	if err != nil {
		return abi.ExecResponse{}, err
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if req.TimeoutMS > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMS)*time.Millisecond)
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Env = req.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = req.Cwd
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if len(req.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(req.Stdin)
	}
	if err := cmd.Start(); err != nil {
		return abi.ExecResponse{}, osErr(err)
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal()) // the shell's convention, as the host does
	}
	resp := abi.ExecResponse{
		ExitCode: code,
		Stdout:   stdout.String(),
		Stderr:   stderr.String(),
		TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded),
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !resp.TimedOut {
		return abi.ExecResponse{}, osErr(err)
	}
	return resp, nil
}

// lookPath resolves a bare program name in the PATH entry of env (never the
// test process's own PATH).
func lookPath(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		if _, err := os.Stat(prog); err != nil {
			return "", osErr(err)
		}
		return prog, nil
	}
	for _, kv := range env {
		dirs, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range filepath.SplitList(dirs) {
			p := filepath.Join(dir, prog)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", callErr(abi.CodeNotFound, "executable %q not found in PATH", prog)
}
