package hostcall

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// probeRefused applies the read-only-mode exec rule (noop, health-check-only,
// status; docs/security.md, "Exec"): nothing may change, so a plugin runs
// only probes, and who may call a program read-only is decided here, never
// by a third-party plugin alone. The request must be marked Probe, and
// either
//
//   - the plugin is built in and the command is the value of one of its
//     declared guard properties (PluginInfo.Guards: exec's onlyif and
//     unless), written by the manifest author and run as Puppet runs them;
//   - or the argv starts with one of the plugin's ProbeExec prefixes and,
//     unless the plugin is built in, with a probe_exec prefix of every
//     grant of the chain: the operator vouches for the program, not the
//     plugin. (The zero chain, an unconfined root, vouches for all.)
//
// A shell command never matches a prefix: a prefix says nothing about what
// follows a ";" in a shell line. exe is the resolved executable. It returns
// "" when the exec may run, else why not.
func probeRefused(st *State, req *abi.ExecRequest, exe string) string {
	if req == nil || !req.Probe {
		return "the request is not marked probe: true"
	}
	if st.Builtin && isGuard(st, req) {
		return ""
	}
	if req.Shell {
		return "a shell command runs only as the value of a built-in type's guard property (exec onlyif, unless)"
	}
	if !slices.ContainsFunc(st.Caps.ProbeExec, func(p string) bool { return prefixMatches(p, exe, req.Argv) }) {
		return "the command is neither a built-in type's guard nor starts with one of the plugin's probe_exec entries"
	}
	if st.Builtin {
		return ""
	}
	for i, g := range st.Caller.Grants {
		if !slices.ContainsFunc(g.ProbeExec, func(p string) bool { return prefixMatches(p, exe, req.Argv) }) {
			return fmt.Sprintf("a third-party plugin's probe_exec needs a matching probe_exec entry in every grant of the chain (the operator vouches that the program is read-only); grant %d of %d has none for %s",
				i+1, len(st.Caller.Grants), strings.Join(append([]string{exe}, req.Argv[1:]...), " "))
		}
	}
	return ""
}

// isGuard reports whether req's command is the value of one of the
// plugin's declared guard properties in this resource: the properties of
// the request being served (State.Properties), their only way here.
func isGuard(st *State, req *abi.ExecRequest) bool {
	for _, name := range st.Guards {
		var lines []string
		switch v := st.Properties[name].(type) {
		case string:
			lines = []string{v}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					lines = append(lines, s)
				}
			}
		}
		for _, s := range lines {
			if req.Shell && s == req.Command {
				return true
			}
			// The exec plugin splits its guards with the same package.
			if words, err := shellwords.Split(s); !req.Shell && err == nil && slices.Equal(words, req.Argv) {
				return true
			}
		}
	}
	return false
}

// prefixMatches reports whether argv, run as the resolved exe, starts with
// prefix: a program path and leading arguments joined by single spaces.
func prefixMatches(prefix, exe string, argv []string) bool {
	words := strings.Split(prefix, " ")
	if len(words) == 0 || words[0] != exe || len(argv) < len(words) {
		return false
	}
	return slices.Equal(argv[1:len(words)], words[1:])
}
