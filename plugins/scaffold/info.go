package main

import (
	"encoding/json"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName       = "scaffold"
	version        = "1.0.0"
	providerChoria = "choria" // CCM's only scaffold provider; kept so provider: choria works
	stateProtocol  = "io.choria.ccm.v1.resource.scaffold.state"

	ensurePresent = "present"
	ensureAbsent  = "absent"

	engineGo  = "go"
	engineJet = "jet"
)

// schema is checked by the host before ccm_validate. post is CCM's list of
// one-key maps, glob to command.
const schema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"name":{"type":"string","description":"absolute, canonical target directory"},` +
	`"ensure":{"type":"string","description":"present or absent","default":"present"},` +
	`"source":{"type":"string","description":"template directory, relative to the manifest directory"},` +
	`"engine":{"type":"string","description":"go or jet","default":"jet"},` +
	`"skip_empty":{"type":"boolean","description":"do not produce files that render to whitespace only"},` +
	`"left_delimiter":{"type":"string"},"right_delimiter":{"type":"string"},` +
	`"purge":{"type":"boolean","description":"remove files in the target the source does not produce"},` +
	`"data":{"type":["object","null"],"description":"replaces the manifest data the templates see"},` +
	`"post":{"type":["array","null"],"items":{"type":"object","additionalProperties":{"type":"string"}},` +
	`"description":"glob (of the file's base name) to command; {} is the file's path"}}}`

// Info describes the scaffold type.
func (*scaffoldType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:              abi.Version,
		Type:             typeName,
		Version:          version,
		Providers:        []string{providerChoria},
		Ensure:           []string{ensurePresent, ensureAbsent},
		DefaultEnsure:    ensurePresent,
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			FSRead:  []string{"/**"},
			FSWrite: []string{"/**"},
			Exec:    []string{"/**"}, // post commands, under the scope's exec grant
		},
	}
}
