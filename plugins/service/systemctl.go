package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Timeouts of the systemctl calls. A start or stop waits for its job, which
// systemd itself bounds at 90s by default; the margin lets that limit fire
// first, so its own error reaches the log.
const (
	probeTimeout  = 30 * time.Second
	mutateTimeout = 2 * time.Minute
	tailLines     = 10
)

// env is the whole environment of systemctl: the host looks the bare name
// up in this PATH, which matches the /usr/bin and /bin grants only. No
// pager, no colours: the output is parsed.
var env = []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0"}

// unitState is what systemctl reports about one unit.
type unitState struct {
	running bool
	enabled bool
}

// activeStates maps is-active output to running (docs/service.md).
var activeStates = map[string]bool{
	"active": true, "inactive": false, "failed": false, "activating": false,
}

// enabledStates maps is-enabled output to enabled (docs/service.md).
var enabledStates = map[string]bool{
	"enabled": true, "enabled-runtime": true, "alias": true, "static": true,
	"indirect": true, "generated": true, "transient": true,
	"disabled": false, "linked": false, "linked-runtime": false,
	"masked": false, "masked-runtime": false,
}

// argv is a systemctl command line; "--" ends the options so the unit name
// is never read as a flag.
func argv(verb, name string) []string {
	if name == "" {
		return []string{"systemctl", verb, "--system"}
	}
	return []string{"systemctl", verb, "--system", "--", name}
}

// readState runs the two status probes. Both exit non-zero for inactive or
// disabled units, so stdout is the answer and the exit code is ignored.
func readState(h sdk.Host, name string) (unitState, error) {
	st, err := readUnit(h, name)
	var na noAnswer
	if errors.As(err, &na) && !systemdRunning(h) {
		return st, fmt.Errorf("systemd is not running on this host (%s is missing), so unit %s cannot be managed: use the service type only where systemd is PID 1 (%v)", systemdDir, name, na.err)
	}
	return st, err
}

// noAnswer is an is-active probe that gave no state: systemctl failed to
// run or to reach systemd. Only then is systemd itself suspected.
type noAnswer struct{ err error }

func (n noAnswer) Error() string { return n.err.Error() }
func (n noAnswer) Unwrap() error { return n.err }

// systemdDir exists while systemd runs as the init system (sd_booted(3)).
const systemdDir = "/run/systemd/system"

// systemdRunning reports whether systemd is the init system. Asked only
// after systemctl failed, to explain it; a refused or failed stat counts as
// running, so the original error stands.
func systemdRunning(h sdk.Host) bool {
	st, err := h.Stat(abi.FSStatRequest{Path: systemdDir})
	return err != nil || st.Exists
}

func readUnit(h sdk.Host, name string) (unitState, error) {
	active, err := probe(h, "is-active", name)
	if err != nil {
		return unitState{}, noAnswer{err}
	}
	running, known := activeStates[active.word]
	if !known {
		return unitState{}, noAnswer{fmt.Errorf("systemctl is-active %s said %q (exit %d%s); expected active, inactive, failed or activating: wait for the unit to settle, then rerun",
			name, active.word, active.code, active.stderr)}
	}
	enabledOut, err := probe(h, "is-enabled", name)
	if err != nil {
		return unitState{}, err
	}
	enabled, known := enabledStates[enabledOut.word]
	if !known {
		if enabledOut.word == "not-found" || enabledOut.word == "" {
			return unitState{}, fmt.Errorf("unit %s not found by systemctl is-enabled (exit %d%s): install it or fix the name", name, enabledOut.code, enabledOut.stderr)
		}
		return unitState{}, fmt.Errorf("systemctl is-enabled %s said %q (exit %d%s), which is neither an enabled nor a disabled state", name, enabledOut.word, enabledOut.code, enabledOut.stderr)
	}
	return unitState{running: running, enabled: enabled}, nil
}

// probeOut is one probe's first stdout line, exit code and stderr (as
// "; stderr: ..." or "", ready for a message).
type probeOut struct {
	word   string
	code   int
	stderr string
}

func probe(h sdk.Host, verb, name string) (probeOut, error) {
	out, err := h.Exec(abi.ExecRequest{Argv: argv(verb, name), Env: env, TimeoutMS: probeTimeout.Milliseconds(), Probe: true})
	if err != nil {
		return probeOut{}, fmt.Errorf("running systemctl %s %s: %w", verb, name, err)
	}
	if out.TimedOut {
		return probeOut{}, fmt.Errorf("systemctl %s %s timed out after %s; its process group was killed", verb, name, probeTimeout)
	}
	word, _, _ := strings.Cut(strings.TrimSpace(out.Stdout), "\n")
	p := probeOut{word: strings.TrimSpace(word), code: out.ExitCode}
	if s := strings.TrimSpace(out.Stderr); s != "" {
		p.stderr = "; stderr: " + strings.Join(tail(s), " / ")
	}
	return p, nil
}

// mutate runs one changing systemctl verb and fails unless it exits 0; the
// error's lines are the tail of its output, for Messages.
func mutate(h sdk.Host, verb, name string) (lines []string, err error) {
	out, err := h.Exec(abi.ExecRequest{Argv: argv(verb, name), Env: env, TimeoutMS: mutateTimeout.Milliseconds()})
	label := strings.TrimSpace("systemctl " + verb + " " + name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("running %s: %w", label, err)
	case out.TimedOut:
		return tailOf(out), fmt.Errorf("%s timed out after %s; its process group was killed", label, mutateTimeout)
	case out.ExitCode != 0:
		return tailOf(out), fmt.Errorf("%s exited %d", label, out.ExitCode)
	}
	return nil, nil
}

// tailOf is the last lines of stderr, or of stdout when stderr is empty.
func tailOf(out abi.ExecResponse) []string {
	if l := tail(out.Stderr); len(l) > 0 {
		return l
	}
	return tail(out.Stdout)
}

func tail(s string) []string {
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	l := strings.Split(s, "\n")
	if len(l) > tailLines {
		l = l[len(l)-tailLines:]
	}
	return l
}
