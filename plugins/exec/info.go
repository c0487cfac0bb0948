package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName      = "exec"
	version       = "1.0.0"
	providerPosix = "posix"
	providerShell = "shell"
	stateProtocol = "io.choria.ccm.v1.resource.exec.state"
	ensurePresent = "present"

	defaultPath = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"
)

// schema is checked by the host before ccm_validate, so it must accept
// every manifest Validate accepts (schematest checks that). Types, unknown
// keys and formats live here; ensure values and the checks that need a more
// specific message stay in Validate.
const schema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"name":{"type":"string","description":"the command when command is unset"},` +
	`"ensure":{"type":"string","description":"present (the only value)","default":"present"},` +
	`"command":{"type":"string"},` +
	`"cwd":{"type":"string","description":"absolute directory","default":"/"},` +
	`"environment":{"type":"array","items":{"type":"string","pattern":"^[^=]+=[\\s\\S]+$","description":"KEY=VALUE"}},` +
	`"path":{"type":"string","description":"colon-separated absolute directories, used as PATH"},` +
	`"returns":{"anyOf":[{"type":"integer","minimum":0,"maximum":255},` +
	`{"type":"array","minItems":1,"items":{"type":"integer","minimum":0,"maximum":255}}],` +
	`"description":"accepted exit codes","default":[0]},` +
	`"timeout":{"type":"string","description":"a duration such as \"90s\" or \"2h\" (also d and w units)"},` +
	`"creates":{"type":"string","description":"absolute path"},` +
	`"onlyif":{"type":"string"},"unless":{"type":"string"},` +
	`"refreshonly":{"type":"boolean"},"refresh_only":{"type":"boolean"},` +
	`"logoutput":{"type":"boolean"}}}`

// Info describes the exec type.
func (*execType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:           abi.Version,
		Type:          typeName,
		Version:       version,
		Providers:     []string{providerPosix, providerShell},
		Ensure:        []string{ensurePresent},
		DefaultEnsure: ensurePresent,
		Refresh:       true,
		Deferred:      []string{"command", "cwd", "environment", "creates", "onlyif", "unless"},
		// The manifest author's guards run as probes in noop, as in Puppet.
		Guards:           []string{"onlyif", "unless"},
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			Exec:   []string{"/**"},
			FSRead: []string{"/**"},
		},
	}
}
