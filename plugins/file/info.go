package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName      = "file"
	version       = "1.0.0"
	providerPosix = "posix"
	stateProtocol = "io.choria.ccm.v1.resource.file.state"

	ensurePresent   = "present"
	ensureAbsent    = "absent"
	ensureDirectory = "directory"
)

var ensureValues = []string{ensurePresent, ensureAbsent, ensureDirectory}

// schema documents the properties for tools; validation is Validate's job.
const schema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"absolute, canonical path"},` +
	`"ensure":{"enum":["present","absent","directory"],"default":"present"},` +
	`"content":{"type":["string","null"],"description":"file content; null or unset = attribute-only"},` +
	`"source":{"type":"string","description":"local file to copy; relative to the manifest directory"},` +
	`"owner":{"type":"string","description":"user name or numeric uid"},` +
	`"group":{"type":"string","description":"group name or numeric gid"},` +
	`"mode":{"type":"string","pattern":"^(0[oO])?[0-7]{3,4}$"},` +
	`"force":{"type":"boolean","description":"with ensure absent: remove a non-empty directory"}}}`

// Info describes the file type.
func (*fileType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:              abi.Version,
		Type:             typeName,
		Version:          version,
		Providers:        []string{providerPosix},
		Ensure:           ensureValues,
		DefaultEnsure:    ensurePresent,
		Refresh:          false,
		Batch:            true,
		Deferred:         []string{"content", "source"},
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			FSRead:  []string{"/**"},
			FSWrite: []string{"/**"},
			Users:   true,
		},
	}
}
