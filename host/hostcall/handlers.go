package hostcall

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// State is who a host call acts for and what it may use: the part of a
// plugin call's state the host calls read. The plugin runtime (package
// host) keeps one per plugin call, inside its own call state, and hands it
// to every handler of that call.
type State struct {
	// Export is the plugin export being called (ccm_apply, ...), or what
	// the engine does without a plugin ("exec", "read", "ccm.plugins").
	Export string
	// Type is the resource type of the plugin.
	Type string
	// Caller is the resource the call acts for, its Mode already forced to
	// the export's (ccm_status read-only, noop requests noop, ...).
	Caller trust.Caller
	// Caps is what the plugin asked for in ccm_describe; nil for the
	// engine's own Exec and reads, which no plugin stands behind.
	Caps *abi.Capabilities
	// Properties are the request's properties: a read-only probe exec may
	// run a command line written in one of them.
	Properties map[string]any
	// Builtin marks a plugin shipped inside ccm: its probe_exec and guards
	// are honoured on its own word in read-only modes; any other plugin's
	// probe_exec needs the grants' (probe.go).
	Builtin bool
	// Guards are the plugin's PluginInfo.Guards.
	Guards []string
	// HostCalls is false for ccm_describe and ccm_validate, which must not
	// touch the system (ccm_lookup and ccm_log stay open).
	HostCalls bool
	// RequestBytes and ExecOutputBytes are the call's
	// host.Limits.RequestBytes (also the most ccm_fs_read returns) and
	// host.Limits.ExecOutputBytes.
	RequestBytes, ExecOutputBytes int64
	// Names caches user and group names for the Host's lifetime.
	Names *NameCache
	// Dirs are the directories whose fsync the call puts off to its end;
	// nil syncs each at once.
	Dirs *DirSyncs
	// Pending are the call's writes whose fsync and rename run after the
	// write call returned (pending.go); nil writes each at once. The
	// plugin runtime settles them (Pending.Settle) before the call's
	// result is accepted, and before Dirs.SyncAll.
	Pending *Pending
	// Runtime is the plugin call being served; nil when there is none.
	Runtime Runtime
	// NetRoots, when set (host.TestDispatcher only), replace the system's
	// TLS roots for ccm_net_fetch.
	NetRoots *x509.CertPool
	// Parts are the staging files of writes in parts this call started
	// (fsparts.go), by target path.
	Parts map[string]PartInode
}

// Runtime is what a host call asks of the plugin call it serves.
type Runtime interface {
	// Log sends a plugin's log line to the caller's log, within the call's
	// log budget.
	Log(level, message string)
	// ExtendDeadline moves the plugin call's deadline by delta (negative
	// to take time back): an exec with its own timeout does not eat into
	// the call's call_timeout.
	ExtendDeadline(delta time.Duration)
}

// Handler serves one host call: raw is the request document; the answer is
// the Ok document or a CallError. Every handler passes allowed, the one
// check, before any OS work (TestEveryHostCallIsChecked).
type Handler func(ctx context.Context, st *State, raw []byte) (any, *abi.CallError)

// Handlers maps every abi.Call* name to its handler. Every host function a
// plugin may import is registered, because instantiation fails on an
// import the host does not provide.
func Handlers() map[string]Handler {
	return map[string]Handler{
		abi.CallFSStat:      typed(fsStat),
		abi.CallFSRead:      settled(typed(FSRead)),
		abi.CallFSWrite:     typed(fsWrite), // completes what it must itself
		abi.CallFSMkdir:     settled(typed(fsMkdir)),
		abi.CallFSRemove:    settled(typed(fsRemove)),
		abi.CallFSChown:     settled(typed(fsChown)),
		abi.CallFSChmod:     settled(typed(fsChmod)),
		abi.CallFSList:      settled(typed(fsList)),
		abi.CallExec:        settled(typed(execCall)),
		abi.CallUserLookup:  typed(userLookup),
		abi.CallGroupLookup: typed(groupLookup),
		abi.CallLookup:      typed(lookupCall),
		abi.CallLog:         typed(logCall),
		abi.CallNetFetch:    settled(typed(netFetch)),
	}
}

// settled completes the call's pending writes (pending.go) before h: a
// read, list, exec, ... then sees every write made before it in place.
func settled(h Handler) Handler {
	return func(ctx context.Context, st *State, raw []byte) (any, *abi.CallError) {
		st.Pending.completeAll(st)
		return h(ctx, st, raw)
	}
}

// typed adapts a handler taking a decoded request.
func typed[Req any](fn func(context.Context, *State, Req) (any, *abi.CallError)) Handler {
	return func(ctx context.Context, st *State, raw []byte) (any, *abi.CallError) {
		var req Req
		if sr, ok := any(&req).(*abi.FSStatRequest); ok && decodeStatRequest(raw, sr) {
			return fn(ctx, st, req) // statjson.go
		}
		if cerr := decodeRequest(raw, &req); cerr != nil {
			return nil, cerr
		}
		return fn(ctx, st, req)
	}
}

// decodeRequest decodes one JSON document strictly: unknown fields and
// trailing data are refused, so a request the host does not fully understand
// is never half-obeyed.
func decodeRequest(raw []byte, v any) *abi.CallError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &abi.CallError{Code: abi.CodeInvalid, Message: "decode request: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &abi.CallError{Code: abi.CodeInvalid, Message: "decode request: trailing data after the JSON document"}
	}
	return nil
}
