package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// tailLines is how many lines of a failed command's output go to Messages.
const tailLines = 10

// Apply follows the decision table of docs/resources.md, runs the command
// unless noop, and checks its exit code against returns.
func (e *execType) Apply(h sdk.Host, req abi.Request) abi.Result {
	s, errs := parse(req.Name, req.Properties, req.Provider, true)
	res := abi.Result{Provider: s.provider}
	if len(errs) > 0 {
		res.Error = "invalid properties: " + strings.Join(errs, "; ")
		return res
	}
	res.FinalEnsure, res.State = ensurePresent, stateDoc(s.name, s.provider, nil)

	run, why, err := decide(h, s, req.Refresh)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if !run {
		res.Messages = []string{why}
		return res
	}
	if req.Noop {
		if err := e.predict(h, req, s); err != nil {
			res.Error = err.Error()
			return res
		}
		e.noopRan.Store(true)
		res.Changed, res.Refreshed = true, req.Refresh
		res.NoopMessage = "Would have executed"
		if req.Refresh {
			res.NoopMessage = "Would have executed via subscribe"
		}
		return res
	}

	out, err := h.Exec(s.execRequest(s.command, false))
	if err != nil {
		res.Error = fmt.Sprintf("running %q: %v", s.command, err)
		return res
	}
	res.State = stateDoc(s.name, s.provider, &out.ExitCode)
	if s.logOutput && out.Stdout != "" {
		// One host call for the whole output: the host splits it into
		// lines. A call per line costs ~70 µs each (50k lines: 3.6 s).
		h.Log("info", strings.TrimRight(out.Stdout, "\n"))
	}
	switch {
	case out.TimedOut:
		res.Error = s.timedOut("command")
	case !slices.Contains(s.returns, out.ExitCode):
		res.Error = fmt.Sprintf("exit code %d not in allowed returns %v", out.ExitCode, s.returns)
	default:
		res.Changed, res.Refreshed = true, req.Refresh
		return res
	}
	res.Messages = tail(out)
	return res
}

// decide is the decision table, first match wins. It says whether to run
// and, when not, why (for the log).
func decide(h sdk.Host, s spec, refresh bool) (run bool, why string, err error) {
	if refresh {
		return true, "", nil
	}
	if s.creates != "" {
		st, err := h.Stat(abi.FSStatRequest{Path: s.creates})
		if err != nil {
			return false, "", fmt.Errorf("checking creates %s: %w", s.creates, err)
		}
		if st.Exists {
			return false, fmt.Sprintf("not run: creates %s exists", s.creates), nil
		}
	}
	if s.onlyif != "" {
		code, err := guard(h, s, "onlyif", s.onlyif)
		if err != nil {
			return false, "", err
		}
		if code != 0 {
			return false, fmt.Sprintf("not run: onlyif %q exited %d", s.onlyif, code), nil
		}
	}
	if s.unless != "" {
		code, err := guard(h, s, "unless", s.unless)
		if err != nil {
			return false, "", err
		}
		if code == 0 {
			return false, fmt.Sprintf("not run: unless %q exited 0", s.unless), nil
		}
	}
	if s.refreshOnly {
		return false, "not run: refreshonly is set and no subscribed resource changed", nil
	}
	return true, "", nil
}

// guard runs onlyif or unless as a probe (allowed in noop) and returns its
// exit code. Failing to start or timing out fails the resource.
func guard(h sdk.Host, s spec, kind, line string) (int, error) {
	out, err := h.Exec(s.execRequest(line, true))
	if err != nil {
		return 0, fmt.Errorf("%s guard %q could not run: %w", kind, line, err)
	}
	if out.TimedOut {
		return 0, errors.New(s.timedOut(fmt.Sprintf("%s guard %q", kind, line)))
	}
	return out.ExitCode, nil
}

// execRequest builds the ccm_exec request for a command line. parse already
// proved that a posix line splits; it splits with sdk/shellwords, as the host
// does to match a probe against the guards written in the properties.
func (s spec) execRequest(line string, probe bool) abi.ExecRequest {
	req := abi.ExecRequest{
		Env:       s.env,
		Cwd:       s.cwd,
		TimeoutMS: s.timeout.Milliseconds(),
		Probe:     probe,
	}
	if s.provider == providerShell {
		req.Shell, req.Command = true, line
		return req
	}
	req.Argv, _ = shellwords.Split(line)
	return req
}

// tail is the last lines of stderr, or of stdout when stderr is empty.
func tail(out abi.ExecResponse) []string {
	l := lines(out.Stderr)
	if len(l) == 0 {
		l = lines(out.Stdout)
	}
	if len(l) > tailLines {
		l = l[len(l)-tailLines:]
	}
	return l
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
