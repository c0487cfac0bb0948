// Package sdk is the Go guest SDK for ccm resource plugins. A plugin is a
// main package built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared that
// calls Register from init (or main) with its Resource. The SDK provides the
// ccm_* exports, decodes their JSON input, and gives the Resource a Host whose
// methods are the ccm host calls (docs/plugins.md).
//
// Everything in this file builds natively too, so a plugin's decision logic
// can be unit-tested on the build machine with a fake Host; the Extism kernel
// imports and the exports live in files built only for wasip1.
package sdk

import "github.com/ccm-dev/ccm/sdk/abi"

// Resource is what a plugin author implements: one resource type.
type Resource interface {
	// Info describes the type. It must not make host calls.
	Info() abi.PluginInfo
	// Validate checks properties (name and ensure included, common
	// properties removed) and returns every problem found. No host calls.
	Validate(req abi.ValidateRequest) []string
	// Status reads the current state. The host refuses mutating calls.
	Status(h Host, req abi.Request) abi.StatusResponse
	// Apply reads state, decides, acts (unless req.Noop), verifies after a
	// real change, and reports. Failures go in Result.Error.
	Apply(h Host, req abi.Request) abi.Result
}

// Host is the plugin's only way to touch the system. Every method is one host
// call; errors are *abi.CallError (Code tells denied, not_found, ...).
type Host interface {
	Stat(abi.FSStatRequest) (abi.FSStatResponse, error)
	ReadFile(abi.FSReadRequest) ([]byte, error)
	WriteFile(abi.FSWriteRequest) error
	Mkdir(abi.FSMkdirRequest) error
	Remove(abi.FSRemoveRequest) error
	Chown(abi.FSChownRequest) error
	Chmod(abi.FSChmodRequest) error
	List(abi.FSListRequest) ([]abi.DirEntry, error)
	Exec(abi.ExecRequest) (abi.ExecResponse, error)
	LookupUser(abi.UserLookupRequest) (abi.UserLookupResponse, error)
	LookupGroup(abi.GroupLookupRequest) (abi.GroupLookupResponse, error)
	Lookup(path string) (value any, found bool, err error)
	Log(level, message string)
	// Fetch makes one HTTP(S) request through the host (ccm_net_fetch),
	// under the net grant; see abi.NetFetchRequest.
	Fetch(abi.NetFetchRequest) (abi.NetFetchResponse, error)
}
