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

// schema is checked by the host before ccm_validate, so it must accept
// every manifest Validate accepts (schematest checks that). Types, unknown
// keys and formats live here; ensure values and the checks that need a more
// specific message stay in Validate.
const schema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"name":{"type":"string","description":"absolute, canonical path"},` +
	`"ensure":{"type":"string","description":"present, absent or directory","default":"present"},` +
	`"content":{"type":["string","number","boolean","null"],"description":"file content; null or unset = attribute-only"},` +
	`"source":{"type":"string","description":"local file to copy, relative to the manifest directory"},` +
	`"owner":{"type":["string","integer"],"description":"user name or numeric uid"},` +
	`"group":{"type":["string","integer"],"description":"group name or numeric gid"},` +
	`"mode":{"type":"string","pattern":"^(0[oO])?[0-7]{3,4}$","description":"a quoted octal string such as \"0644\""},` +
	`"force":{"type":"boolean","description":"with ensure absent: remove a non-empty directory"},` +
	`"show_diff":{"type":"boolean","description":"false: report a content change without its text (secrets)","default":true}}}`

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
