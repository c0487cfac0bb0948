// Package hostapi is the one small interface between the engine (runtime/)
// and the WASM plugin host (host/). The engine depends on it; the host
// implements it; cmd/ccm wires the two. It must import nothing of either.
package hostapi

import (
	"context"
	"errors"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Plugins is all the engine needs from the WASM plugin host (package host
// implements it). The engine never imports the host: cmd/ccm wires them.
//
// A plugin is addressed by an id. The root scope's plugins (built-in, and
// installed by the operator) have id == their type name; a plugin
// registered from a file (ccm.plugins) gets the id Register returns. The
// typ parameters below take an id; abi.Request.Type is always the resource
// type, and trust.Caller.Plugin carries the id for Status, Apply and
// ApplyBatch.
//
// Every method that runs plugin code takes the caller whose scope it runs
// for: the call runs under caller.Limits, in a plugin instance serving only
// callers with the same grant chain and limits (an instance's memory never
// crosses from one grant to another). The zero Caller is the root scope.
type Plugins interface {
	// Info describes a plugin by id, loading it on first use. An unknown id
	// is an error wrapping ErrUnknownType.
	Info(ctx context.Context, caller trust.Caller, typ string) (abi.PluginInfo, error)
	// Preload compiles the plugins of these ids in parallel, so a run pays
	// compile time once, up front. An id is listed once per resource of it
	// the run will call (a hint: the host may interpret a plugin a run
	// barely uses instead of compiling it).
	Preload(ctx context.Context, caller trust.Caller, types []string) error
	// Register loads the plugin module in file (an absolute path): it reads
	// the file once, through caller.Grants like a plugin's ccm_fs_read
	// (a file outside fs_read is refused before it is opened, and the
	// refusal says nothing about it), checks it against wantSHA256
	// (lowercase hex; "" = not pinned) before compiling anything, compiles
	// it, and runs ccm_describe. It returns the plugin's id and description.
	// The same bytes registered again return the same id and are not
	// compiled again. A plugin whose type the root scope already provides (a
	// built-in or operator-installed type) is refused with an error wrapping
	// ErrTypeTaken.
	Register(ctx context.Context, caller trust.Caller, file, wantSHA256 string) (id string, info abi.PluginInfo, err error)
	// RegisterBundled is Register for a pinned plugin file inside bundle,
	// the extracted directory of a verified remote bundle (immutable and
	// link-free): the file is read without caller's fs_read grant, as the
	// bundle's own manifests and templates are, but described, and later
	// called, under caller's grants and limits like any plugin. A file
	// outside bundle, or an empty pin, is refused.
	RegisterBundled(ctx context.Context, caller trust.Caller, file, bundle, wantSHA256 string) (id string, info abi.PluginInfo, err error)
	// Validate runs ccm_validate for many resources of one type at once.
	// A response's Handle, when not 0, is an opaque token for what the
	// plugin kept of that valid resource: give it back in the Handle of the
	// resource's one Apply or ApplyBatch request when, and only when, that
	// request's Properties are exactly the ones validated (the host then
	// sends the token instead of them, to the instance that kept it only,
	// and the properties otherwise). Never send a token twice.
	Validate(ctx context.Context, caller trust.Caller, typ string, reqs []abi.ValidateRequest) ([]abi.ValidateResponse, error)
	// Status runs ccm_status with a read-only caller.
	Status(ctx context.Context, caller trust.Caller, req abi.Request) (abi.StatusResponse, error)
	// Apply runs ccm_apply. A trap, timeout or limit is an error; the host
	// discards that instance and the next call gets a fresh one.
	Apply(ctx context.Context, caller trust.Caller, req abi.Request) (abi.Result, error)
	// ApplyBatch runs ccm_apply for consecutive, mutually independent
	// resources of one type in one plugin call when the plugin exports
	// ccm_apply_batch (else one ccm_apply per request). callers[i] goes with
	// reqs[i]. It returns one result per request in order, fewer when
	// stopOnFailure is set and a result has Error (nothing after it ran). A
	// trap, timeout or limit fails the whole remaining batch: the error is
	// returned with the results that completed before it.
	ApplyBatch(ctx context.Context, callers []trust.Caller, reqs []abi.Request, stopOnFailure bool) ([]abi.Result, error)
	// Exec runs a command for the host itself (health checks) through the
	// same grant check as a plugin's ccm_exec.
	Exec(ctx context.Context, caller trust.Caller, req abi.ExecRequest) (abi.ExecResponse, error)
	// ReadFile reads a file for the engine itself (child manifests and the
	// files templates name) through the same grant check as a plugin's
	// ccm_fs_read: caller.Grants decide, symlinks are resolved before
	// matching, the size is bounded by the request limit.
	ReadFile(ctx context.Context, caller trust.Caller, path string) ([]byte, error)
	// Close releases every instance and compiled module.
	Close(ctx context.Context) error
}

// HandleForgetter is implemented by a Plugins that hands out validation
// handles (Plugins.Validate): ForgetHandles frees what plugins still keep
// for handles never sent back, which no plan of the run that ends can send
// any more. The engine calls it when a run, an ensure or a render ends; a
// token of a concurrent run may stop working (its properties are then sent,
// as after any instance recycle), never go wrong.
type HandleForgetter interface {
	ForgetHandles(ctx context.Context)
}

// ErrUnknownType is wrapped by Plugins.Info for a type no plugin provides.
var ErrUnknownType = errors.New("unknown resource type")

// ErrTypeTaken is wrapped by Plugins.Register for a plugin whose type is
// already provided by a built-in or an operator-installed plugin: a declared
// plugin may not shadow one.
var ErrTypeTaken = errors.New("resource type already provided")
