// Package abi holds the JSON documents exchanged between the ccm host and a
// resource plugin: the exports a plugin provides, the host calls it may make,
// and the error codes of those calls. It is the written contract of
// docs/plugins.md, shared by the host (native Go) and the Go guest SDK
// (GOOS=wasip1), so it must import nothing but the standard library's
// encoding/json and must stay free of OS access.
package abi

import "encoding/json"

// Version is the plugin ABI this package describes. A plugin states the ABI it
// was built against in PluginInfo.ABI; the host keeps a list of the versions it
// speaks and refuses others with a message naming both.
const Version = 1

// Exports a plugin provides. Each takes a JSON document as Extism input and
// returns a JSON document as Extism output; a non-zero return code with an
// Extism error string means the call itself failed.
const (
	ExportDescribe      = "ccm_describe"       // no input → PluginInfo
	ExportValidate      = "ccm_validate"       // ValidateRequest → ValidateResponse
	ExportValidateBatch = "ccm_validate_batch" // ValidateBatchRequest → ValidateBatchResponse (optional)
	ExportStatus        = "ccm_status"         // Request → StatusResponse
	ExportApply         = "ccm_apply"          // Request → Result
	ExportApplyBatch    = "ccm_apply_batch"    // BatchRequest → BatchResponse (optional)
)

// Capabilities is what a plugin asks for (in PluginInfo) and, with the same
// shape, what a scope grants. Absent key = nothing. Paths and executables are
// absolute doublestar globs ("/etc/**"); net entries are "[METHOD ]scheme://host[:port]"
// ("GET https://*.example.com", "https://releases.example.com:8443"),
// "host[:port]" (any scheme and method), the NATS targets "nats:obj/B",
// "nats:kv/B", "nats", or "*" (docs/security.md, "Network").
type Capabilities struct {
	FSRead  []string `json:"fs_read,omitempty"`
	FSWrite []string `json:"fs_write,omitempty"`
	Exec    []string `json:"exec,omitempty"`
	Net     []string `json:"net,omitempty"`
	Users   bool     `json:"users,omitempty"`
	// Setid is a grant key (a plugin need not request it): writing, chmod-ing
	// or creating a file or directory with the setuid or setgid bit needs it
	// in every grant of the caller's chain (docs/security.md, "Filesystem").
	Setid bool `json:"setid,omitempty"`
	// ProbeExec lists read-only commands the plugin may run in read-only modes
	// (ccm_status, noop, health-check-only), as argv prefixes joined by single
	// spaces: "/usr/bin/dpkg-query -W". See ExecRequest.Probe.
	ProbeExec []string `json:"probe_exec,omitempty"`
	// Env is a grant key only (a plugin does not request it): the
	// environment variables an exec may set beyond the free ones, as "NAME"
	// (any value), "NAME=VALUE" (exactly) or "*" (any variable outside the
	// code-injection class). See docs/security.md, "Exec".
	Env []string `json:"env,omitempty"`
}

// PluginInfo is the answer to ccm_describe. The host drives everything
// type-specific from it: no part of the host switches on a type name.
type PluginInfo struct {
	ABI           int      `json:"abi"`
	Type          string   `json:"type"`
	Version       string   `json:"version"`
	Providers     []string `json:"providers"`
	Ensure        []string `json:"ensure"`
	DefaultEnsure string   `json:"default_ensure,omitempty"` // "" = ensure is required
	Refresh       bool     `json:"refresh"`                  // accepts subscribe (exec, service)
	// Batch invites the host to apply runs of independent resources of this
	// type in one ccm_apply_batch call. Set it when an apply is cheap (file);
	// leave it off when one may run long (exec), so each resource is reported
	// as soon as it is done.
	Batch bool `json:"batch,omitempty"`
	// Lock names a run lock the host holds around each ccm_apply of this
	// plugin in apply mode (never noop, health checks or status): an
	// exclusive flock on a file named after it, so concurrent ccm runs do not
	// interleave their changes ("package" for dpkg/rpm, "service" for
	// systemd). 1 to 64 of a-z, 0-9, '.', '_', '-'. Empty: no lock.
	Lock string `json:"lock,omitempty"`
	// Deferred lists property names whose templates are expanded just before
	// the resource runs (after control), not when the manifest loads.
	Deferred []string `json:"deferred,omitempty"`
	// Guards lists properties whose values are command lines the manifest
	// author wrote to decide whether the resource runs (exec: onlyif,
	// unless). A built-in plugin may run them as probes (ExecRequest.Probe)
	// in read-only modes, as Puppet does; a third-party plugin's guards are
	// not honoured (its probes need the grant's probe_exec).
	Guards []string `json:"guards,omitempty"`
	// Handles says the plugin keeps what it parsed of each valid resource
	// it validates and answers it with a handle (ValidateResponse.Handle),
	// so that the host may apply that resource by its handle instead of
	// sending its properties again (Request.Handle). The Go SDK sets it for
	// a Resource that implements sdk.Preparer. A plugin that leaves it off
	// never sees a handle.
	Handles          bool            `json:"handles,omitempty"`
	PropertiesSchema json.RawMessage `json:"properties_schema,omitempty"`
	Capabilities     Capabilities    `json:"capabilities"`
}

// ValidateRequest is the input of ccm_validate. Properties hold the
// type-specific properties plus name and ensure; common properties (require,
// subscribe, control, alias, health_checks, provider) are removed by the host.
type ValidateRequest struct {
	Properties map[string]any `json:"properties"`
	Provider   string         `json:"provider,omitempty"`
}

// ValidateResponse lists every problem found; empty means valid.
type ValidateResponse struct {
	Errors []string `json:"errors"`
	// Handle names what the plugin kept of this valid resource, for a
	// plugin whose PluginInfo.Handles is set (0 = nothing kept). It is good
	// once, for one ccm_apply or ccm_apply_batch request of the same plugin
	// instance (Request.Handle); the plugin may forget it after that call.
	Handle int64 `json:"handle,omitempty"`
}

// ValidateBatchRequest validates many resources in one call.
type ValidateBatchRequest struct {
	Requests []ValidateRequest `json:"requests"`
}

// ValidateBatchResponse has one entry per request, in order.
type ValidateBatchResponse struct {
	Results []ValidateResponse `json:"results"`
}

// Request is the input of ccm_status and ccm_apply. Properties are final:
// templates expanded (deferred ones too), defaults applied, ensure filled.
// The host sets Noop and HealthCheckOnly from the run's mode; ccm never
// calls ccm_apply in health-check-only mode (health checks run without the
// plugin), so a plugin needs no HealthCheckOnly branch.
type Request struct {
	Type            string         `json:"type"`
	Name            string         `json:"name"`
	Properties      map[string]any `json:"properties"`
	Provider        string         `json:"provider,omitempty"` // forced provider, "" = plugin chooses
	Noop            bool           `json:"noop,omitempty"`
	HealthCheckOnly bool           `json:"health_check_only,omitempty"`
	Refresh         bool           `json:"refresh,omitempty"` // a subscribed resource changed
	WorkingDir      string         `json:"working_dir"`       // directory of the declaring manifest
	// NoState says the host will not read Result.State (no --json output,
	// no session): a plugin may leave the state document out, which saves
	// building, encoding and decoding it for every resource. Sending it
	// anyway is correct.
	NoState bool `json:"no_state,omitempty"`
	// Diff asks for Result.Diff when the plugin changes (or, in noop, would
	// change) a resource's content: set in noop and by apply --diff; see
	// HideDiff. A plugin may still hide a diff the resource marks secret.
	Diff bool `json:"diff,omitempty"`
	// HideDiff (apply --no-diff) asks for Result.Diff without the contents:
	// "content changed (diff hidden)", as for a resource marked secret.
	HideDiff bool `json:"hide_diff,omitempty"`
	// AfterChanges is set in noop once an earlier resource of another type
	// would have changed the host: the plugin then stops predicting failures
	// from the host's current state (a missing user, program or directory),
	// which that change may have provided.
	AfterChanges bool `json:"after_changes,omitempty"`
	// Handle, in ccm_apply and ccm_apply_batch only, refers to a resource
	// the same plugin instance validated in this run (a
	// ValidateResponse.Handle): its properties are exactly the ones
	// validated, so the host leaves Properties out and the plugin applies
	// what it kept. Sent only to a plugin whose PluginInfo.Handles is set,
	// at most once per handle; a plugin that does not know the handle
	// fails the resource. 0 = none: Properties are complete.
	Handle int64 `json:"handle,omitempty"`
}

// Result is the output of ccm_apply. A plugin verifies convergence itself
// after a real change and reports "failed to reach desired state: <reason>"
// in Error when it did not converge.
type Result struct {
	Changed     bool           `json:"changed"`
	Refreshed   bool           `json:"refreshed,omitempty"`
	Provider    string         `json:"provider,omitempty"`     // provider used
	FinalEnsure string         `json:"final_ensure,omitempty"` // observed ensure after the run
	NoopMessage string         `json:"noop_message,omitempty"`
	State       map[string]any `json:"state,omitempty"`
	Messages    []string       `json:"messages,omitempty"` // informational lines for the log
	// Diff shows a content change, asked for by Request.Diff: a unified diff
	// (diff -u), or a one-line summary when the contents cannot be shown
	// (binary, too large, hidden).
	Diff  string `json:"diff,omitempty"`
	Error string `json:"error,omitempty"` // non-empty = the resource failed
	// DurationNS is how long the apply took, measured by the plugin; the
	// SDK fills it for each resource of a batch.
	DurationNS int64 `json:"duration_ns,omitempty"`
}

// StatusResponse is the output of ccm_status.
type StatusResponse struct {
	Provider    string         `json:"provider,omitempty"`
	FinalEnsure string         `json:"final_ensure,omitempty"`
	State       map[string]any `json:"state"`
	Error       string         `json:"error,omitempty"`
}

// BatchRequest applies consecutive, mutually independent resources of one
// type in one call. The plugin returns one Result per request, in order, and
// stops after the first failed one when StopOnFailure is set (the results
// slice is then shorter than the requests slice).
type BatchRequest struct {
	Requests      []Request `json:"requests"`
	StopOnFailure bool      `json:"stop_on_failure,omitempty"`
}

// BatchResponse is the output of ccm_apply_batch.
type BatchResponse struct {
	Results []Result `json:"results"`
}
