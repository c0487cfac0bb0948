package host

import (
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// probeAllowed applies the read-only-mode exec rule of abi.ExecRequest: the
// request must be marked Probe, and its command must be either a string the
// manifest author wrote in the resource's properties (a guard such as exec
// onlyif) or, for argv commands only, start with one of the plugin's
// ProbeExec prefixes. A shell command never matches a prefix: a prefix says
// nothing about what follows a ";" in a shell line.
func probeAllowed(st *callState, req *abi.ExecRequest, exe string) bool {
	if req == nil || !req.Probe {
		return false
	}
	written := propertyStrings(st.properties, st.caller.Properties)
	if req.Shell {
		return slices.Contains(written, req.Command)
	}
	for _, s := range written {
		// The exec plugin splits its guards with the same package.
		if words, err := shellwords.Split(s); err == nil && slices.Equal(words, req.Argv) {
			return true
		}
	}
	for _, prefix := range st.caps.ProbeExec {
		words := strings.Split(prefix, " ")
		if len(words) == 0 || words[0] != exe || len(req.Argv) < len(words) {
			continue
		}
		if slices.Equal(req.Argv[1:len(words)], words[1:]) {
			return true
		}
	}
	return false
}

// propertyStrings collects the string values of the property maps and the
// strings in their list values: where a manifest author writes commands
// (exec onlyif, unless). Deeper values are not commands and are left out,
// so a nested document cannot smuggle one in.
func propertyStrings(maps ...map[string]any) []string {
	var out []string
	for _, m := range maps {
		for _, v := range m {
			switch v := v.(type) {
			case string:
				out = append(out, v)
			case []string:
				out = append(out, v...)
			case []any:
				for _, e := range v {
					if s, ok := e.(string); ok {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}
