package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName      = "archive"
	version       = "1.0.0"
	providerHTTP  = "http"
	stateProtocol = "io.choria.ccm.v1.resource.archive.state"
	ensurePresent = "present"
	ensureAbsent  = "absent"
)

// schema is checked by the host before ccm_validate; Validate keeps the
// checks that need a more specific message.
const schema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"name":{"type":"string","description":"absolute path the archive is saved to; ends in .tar.gz, .tgz, .tar or .zip like url"},` +
	`"ensure":{"type":"string","description":"present or absent","default":"present"},` +
	`"url":{"type":"string","description":"http or https URL of the archive"},` +
	`"checksum":{"type":"string","description":"expected sha256 of the archive, hex"},` +
	`"extract_parent":{"type":"string","description":"absolute directory to extract into"},` +
	`"creates":{"type":"string","description":"absolute path; when it exists nothing is downloaded or extracted"},` +
	`"cleanup":{"type":"boolean","description":"remove the archive after extracting (needs extract_parent and creates)"},` +
	`"owner":{"type":"string","description":"owner of the archive and the extracted files"},` +
	`"group":{"type":"string","description":"group of the archive and the extracted files"},` +
	`"username":{"type":"string","description":"HTTP basic auth user"},` +
	`"password":{"type":"string","description":"HTTP basic auth password"},` +
	`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"HTTP request headers"}}}`

// Info describes the archive type.
func (*archiveType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:              abi.Version,
		Type:             typeName,
		Version:          version,
		Providers:        []string{providerHTTP},
		Ensure:           []string{ensurePresent, ensureAbsent},
		DefaultEnsure:    ensurePresent,
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			FSRead:  []string{"/**"},
			FSWrite: []string{"/**"},
			Net:     []string{"GET http://*:*", "GET https://*:*"},
		},
	}
}
