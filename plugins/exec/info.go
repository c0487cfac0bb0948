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

// schema documents the properties for tools; validation is Validate's job.
const schema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"the command when command is unset"},` +
	`"ensure":{"enum":["present"],"default":"present"},` +
	`"command":{"type":"string"},` +
	`"cwd":{"type":"string","default":"/"},` +
	`"environment":{"type":"array","items":{"type":"string","pattern":"^[^=]+=.+$"}},` +
	`"path":{"type":"string","description":"colon-separated absolute directories, used as PATH"},` +
	`"returns":{"type":"array","items":{"type":"integer"},"default":[0]},` +
	`"timeout":{"type":"string","description":"Go duration, also d and w units"},` +
	`"creates":{"type":"string"},"onlyif":{"type":"string"},"unless":{"type":"string"},` +
	`"refreshonly":{"type":"boolean"},"refresh_only":{"type":"boolean"},` +
	`"logoutput":{"type":"boolean"}}}`

// Info describes the exec type.
func (*execType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:              abi.Version,
		Type:             typeName,
		Version:          version,
		Providers:        []string{providerPosix, providerShell},
		Ensure:           []string{ensurePresent},
		DefaultEnsure:    ensurePresent,
		Refresh:          true,
		Deferred:         []string{"command", "cwd", "environment", "creates", "onlyif", "unless"},
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			Exec:   []string{"/**"},
			FSRead: []string{"/**"},
		},
	}
}
