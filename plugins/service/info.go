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

// schema documents the properties for tools; validation is Validate's job.
const schema = `{"type":"object","properties":{` +
	`"name":{"type":"string","pattern":"^[A-Za-z0-9._+:~@][A-Za-z0-9._+:~@-]*$","description":"systemd unit name"},` +
	`"ensure":{"enum":["running","stopped"],"default":"running"},` +
	`"enable":{"type":"boolean","description":"enable (true) or disable (false) at boot; unset leaves it alone"}}}`

// Info describes the service type.
func (*serviceType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:              abi.Version,
		Type:             typeName,
		Version:          version,
		Providers:        []string{providerSystemd},
		Ensure:           []string{ensureRunning, ensureStopped},
		DefaultEnsure:    ensureRunning,
		Refresh:          true,
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			Exec: []string{"/usr/bin/systemctl", "/bin/systemctl"},
			ProbeExec: []string{
				"/usr/bin/systemctl is-active", "/usr/bin/systemctl is-enabled",
				"/bin/systemctl is-active", "/bin/systemctl is-enabled",
			},
		},
	}
}
