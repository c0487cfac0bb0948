package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName        = "service"
	version         = "1.0.0"
	providerSystemd = "systemd"
	stateProtocol   = "io.choria.ccm.v1.resource.service.state"
	ensureRunning   = "running"
	ensureStopped   = "stopped"
)

// schema is checked by the host before ccm_validate, so it must accept
// every manifest Validate accepts (schematest checks that). Types, unknown
// keys and formats live here; ensure values and the checks that need a more
// specific message stay in Validate.
const schema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"name":{"type":"string","pattern":"^[A-Za-z0-9._+:~@][A-Za-z0-9._+:~@-]*$","description":"systemd unit name"},` +
	`"ensure":{"type":"string","description":"running or stopped","default":"running"},` +
	`"enable":{"type":"boolean","description":"enable (true) or disable (false) at boot; unset leaves it alone"}}}`

// Info describes the service type.
func (*serviceType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:           abi.Version,
		Type:          typeName,
		Version:       version,
		Providers:     []string{providerSystemd},
		Ensure:        []string{ensureRunning, ensureStopped},
		DefaultEnsure: ensureRunning,
		Refresh:       true,
		// Concurrent ccm runs take turns at systemctl, so two runs do not
		// interleave a daemon-reload with another's start or stop.
		Lock:             "service",
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			Exec: []string{"/usr/bin/systemctl", "/bin/systemctl"},
			// Only to tell "systemd is not running" after systemctl fails.
			FSRead: []string{systemdDir},
			ProbeExec: []string{
				"/usr/bin/systemctl is-active", "/usr/bin/systemctl is-enabled",
				"/bin/systemctl is-active", "/bin/systemctl is-enabled",
			},
		},
	}
}
