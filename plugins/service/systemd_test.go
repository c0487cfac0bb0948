package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// unit is one simulated systemd unit: its is-active and is-enabled words.
type unit struct {
	active  string
	enabled string
}

// systemd is an sdk.Host that simulates a tiny systemd behind ccm_exec. It
// answers the two probes from its units, applies start, stop, restart,
// enable and disable to them, records every command as "verb name", and,
// like the host in read-only modes, refuses any exec not marked Probe. It
// fails the test on any request the real host would refuse or that breaks
// the plugin's own rules (a shell, no timeout, a foreign environment).
type systemd struct {
	t        *testing.T
	readOnly bool
	units    map[string]*unit
	calls    []string
	// fail makes a verb exit with this code, saying "<verb> failed" on
	// stderr and changing nothing.
	fail map[string]int
	// timeout makes a verb report a timeout, changing nothing.
	timeout map[string]bool
	// stuck makes start and restart exit 0 but leave the unit inactive.
	stuck bool
	// execErr makes every exec fail to start with this error.
	execErr error
	// notBooted makes /run/systemd/system absent: systemd is not PID 1.
	notBooted bool
}

func newSystemd(t *testing.T, units map[string]*unit) *systemd {
	return &systemd{t: t, units: units, fail: map[string]int{}, timeout: map[string]bool{}}
}

func (s *systemd) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	s.t.Helper()
	s.checkRequest(req)
	if s.readOnly && !req.Probe {
		s.calls = append(s.calls, "REFUSED "+strings.Join(req.Argv, " "))
		return abi.ExecResponse{}, &abi.CallError{Code: abi.CodeDenied, Message: "noop mode runs only probes"}
	}
	if s.execErr != nil {
		return abi.ExecResponse{}, s.execErr
	}
	verb, name := req.Argv[1], ""
	if verb != "daemon-reload" {
		name = req.Argv[4]
	}
	s.calls = append(s.calls, strings.TrimSpace(verb+" "+name))
	if s.timeout[verb] {
		return abi.ExecResponse{ExitCode: 137, TimedOut: true}, nil
	}
	if code, ok := s.fail[verb]; ok {
		return abi.ExecResponse{ExitCode: code, Stderr: "Job for " + name + " failed.\n" + verb + " failed\n"}, nil
	}
	u := s.units[name]
	switch verb {
	case "is-active":
		if u == nil {
			return abi.ExecResponse{ExitCode: 4, Stdout: "inactive\n"}, nil
		}
		return abi.ExecResponse{ExitCode: boolExit(u.active == "active"), Stdout: u.active + "\n"}, nil
	case "is-enabled":
		if u == nil {
			return abi.ExecResponse{ExitCode: 1, Stderr: "Failed to get unit file state for " + name + ".service: No such file or directory\n"}, nil
		}
		return abi.ExecResponse{ExitCode: boolExit(u.enabled == "enabled"), Stdout: u.enabled + "\n"}, nil
	case "daemon-reload":
		return abi.ExecResponse{}, nil
	}
	if u == nil {
		return abi.ExecResponse{ExitCode: 5, Stderr: "Unit " + name + ".service not found.\n"}, nil
	}
	switch verb {
	case "start", "restart":
		if !s.stuck {
			u.active = "active"
		}
	case "stop":
		u.active = "inactive"
	case "enable":
		u.enabled = "enabled"
	case "disable":
		u.enabled = "disabled"
	default:
		s.t.Errorf("unexpected systemctl verb %q", verb)
	}
	return abi.ExecResponse{}, nil
}

// checkRequest holds every request to the plugin's rules and the host's
// probe rule, with the prefixes the plugin declares in its Info.
func (s *systemd) checkRequest(req abi.ExecRequest) {
	s.t.Helper()
	switch {
	case req.Shell || req.Command != "":
		s.t.Errorf("exec through a shell: %+v", req)
	case req.TimeoutMS <= 0:
		s.t.Errorf("exec without a timeout: %v", req.Argv)
	case !slices.Equal(req.Env, env) || !slices.Contains(req.Env, "PATH=/usr/bin:/bin"):
		s.t.Errorf("exec environment %q", req.Env)
	case len(req.Argv) < 3 || req.Argv[0] != "systemctl" || req.Argv[2] != "--system":
		s.t.Errorf("argv %q is not systemctl VERB --system ...", req.Argv)
	case req.Argv[1] == "daemon-reload" && len(req.Argv) != 3:
		s.t.Errorf("daemon-reload argv %q", req.Argv)
	case req.Argv[1] != "daemon-reload" && (len(req.Argv) != 5 || req.Argv[3] != "--"):
		s.t.Errorf("argv %q does not end the options before the name", req.Argv)
	}
	if req.Probe {
		prefix := "/usr/bin/" + req.Argv[0] + " " + req.Argv[1]
		if !slices.Contains((&serviceType{}).Info().Capabilities.ProbeExec, prefix) {
			s.t.Errorf("probe %q matches no declared probe_exec prefix", req.Argv)
		}
	}
}

// mutations are the recorded calls other than the two probes.
func (s *systemd) mutations() []string {
	var out []string
	for _, c := range s.calls {
		if !strings.HasPrefix(c, "is-active ") && !strings.HasPrefix(c, "is-enabled ") {
			out = append(out, c)
		}
	}
	return out
}

func boolExit(ok bool) int {
	if ok {
		return 0
	}
	return 3
}

func (s *systemd) refuse(call string) error {
	s.t.Errorf("the service plugin made a %s call; it may only exec", call)
	return &abi.CallError{Code: abi.CodeDenied, Message: call + " is not granted"}
}

// Stat answers only the one path the plugin may stat, to tell whether
// systemd runs; anything else fails the test.
func (s *systemd) Stat(req abi.FSStatRequest) (abi.FSStatResponse, error) {
	if req.Path != systemdDir {
		return abi.FSStatResponse{}, s.refuse(abi.CallFSStat)
	}
	s.calls = append(s.calls, "stat "+req.Path)
	if s.notBooted {
		return abi.FSStatResponse{}, nil
	}
	return abi.FSStatResponse{Exists: true, Type: "directory"}, nil
}
func (s *systemd) ReadFile(abi.FSReadRequest) ([]byte, error) { return nil, s.refuse(abi.CallFSRead) }
func (s *systemd) WriteFile(abi.FSWriteRequest) error         { return s.refuse(abi.CallFSWrite) }
func (s *systemd) Mkdir(abi.FSMkdirRequest) error             { return s.refuse(abi.CallFSMkdir) }
func (s *systemd) Remove(abi.FSRemoveRequest) error           { return s.refuse(abi.CallFSRemove) }
func (s *systemd) Chown(abi.FSChownRequest) error             { return s.refuse(abi.CallFSChown) }
func (s *systemd) Chmod(abi.FSChmodRequest) error             { return s.refuse(abi.CallFSChmod) }
func (s *systemd) List(abi.FSListRequest) ([]abi.DirEntry, error) {
	return nil, s.refuse(abi.CallFSList)
}
func (s *systemd) LookupUser(abi.UserLookupRequest) (abi.UserLookupResponse, error) {
	return abi.UserLookupResponse{}, s.refuse(abi.CallUserLookup)
}
func (s *systemd) LookupGroup(abi.GroupLookupRequest) (abi.GroupLookupResponse, error) {
	return abi.GroupLookupResponse{}, s.refuse(abi.CallGroupLookup)
}
func (s *systemd) Lookup(string) (any, bool, error) { return nil, false, s.refuse(abi.CallLookup) }
func (s *systemd) Log(level, message string) {
	s.calls = append(s.calls, fmt.Sprintf("LOG %s %s", level, message))
}

var _ sdk.Host = (*systemd)(nil)

func (s *systemd) Fetch(abi.NetFetchRequest) (abi.NetFetchResponse, error) {
	return abi.NetFetchResponse{}, &abi.CallError{Code: abi.CodeDenied, Message: "net not granted"}
}
