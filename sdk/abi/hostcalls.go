package abi

import "encoding/json"

// Host calls live in the Extism namespace "extism:host/user". Each takes one
// i64 Extism memory offset holding a JSON request and returns one i64 offset
// holding a JSON Response. A refused call is an ordinary error response; it
// never traps.
const HostNamespace = "extism:host/user"

// Host call names.
const (
	CallFSStat      = "ccm_fs_stat"
	CallFSRead      = "ccm_fs_read"
	CallFSWrite     = "ccm_fs_write"
	CallFSMkdir     = "ccm_fs_mkdir"
	CallFSRemove    = "ccm_fs_remove"
	CallFSChown     = "ccm_fs_chown"
	CallFSChmod     = "ccm_fs_chmod"
	CallFSList      = "ccm_fs_list"
	CallExec        = "ccm_exec"
	CallUserLookup  = "ccm_user_lookup"
	CallGroupLookup = "ccm_group_lookup"
	CallLookup      = "ccm_lookup"
	CallLog         = "ccm_log"
)

// Error codes of CallError.
const (
	CodeDenied   = "denied"    // the grant or the mode refuses the call
	CodeNotFound = "not_found" // path, user, group or executable missing
	CodeExists   = "exists"
	CodeInvalid  = "invalid" // malformed request
	CodeIO       = "io"
	CodeTimeout  = "timeout"
	CodeTooLarge = "too_large"
)

// Response is the envelope of every host-call answer: exactly one of Ok and
// Error is set. Ok holds the call's own response document.
type Response struct {
	Ok    json.RawMessage `json:"ok,omitempty"`
	Error *CallError      `json:"error,omitempty"`
}

// CallError is a refused or failed host call.
type CallError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *CallError) Error() string { return e.Code + ": " + e.Message }

// FSStatRequest asks for the state of one path.
type FSStatRequest struct {
	Path           string `json:"path"`
	FollowSymlinks bool   `json:"follow_symlinks,omitempty"`
	Checksum       bool   `json:"checksum,omitempty"` // compute sha256 host-side (regular files)
}

// FSStatResponse describes a path. A missing path is Exists=false, not an error.
type FSStatResponse struct {
	Exists     bool   `json:"exists"`
	Type       string `json:"type,omitempty"` // file, directory, symlink, other
	Mode       uint32 `json:"mode,omitempty"` // permission bits (0o7777 mask)
	UID        int    `json:"uid"`
	GID        int    `json:"gid"`
	Owner      string `json:"owner,omitempty"` // user name, or the uid in digits when unknown
	Group      string `json:"group,omitempty"`
	Size       int64  `json:"size,omitempty"`
	MTime      int64  `json:"mtime,omitempty"` // unix seconds
	SHA256     string `json:"sha256,omitempty"`
	LinkTarget string `json:"link_target,omitempty"`
}

// FSReadRequest reads a file (never follows a final symlink out of the grant).
type FSReadRequest struct {
	Path     string `json:"path"`
	MaxBytes int64  `json:"max_bytes,omitempty"` // 0 = host default limit
}

// FSReadResponse carries the bytes (base64 in JSON).
type FSReadResponse struct {
	Content []byte `json:"content"`
}

// FSWriteRequest writes a regular file atomically: temp file in the same
// directory, chmod, write, fsync, chown, rename over the target. Exactly one
// of Content (bytes) and Source (a local file the host copies, needs fs_read
// on it) is used; Source wins when set. Owner/Group empty = leave as created.
type FSWriteRequest struct {
	Path    string `json:"path"`
	Content []byte `json:"content,omitempty"`
	Source  string `json:"source,omitempty"`
	Mode    uint32 `json:"mode"`
	Owner   string `json:"owner,omitempty"` // name or all-digit id
	Group   string `json:"group,omitempty"`
}

// FSMkdirRequest creates a directory (with parents when asked), then chmods
// it exactly (umask-proof) and chowns it.
type FSMkdirRequest struct {
	Path    string `json:"path"`
	Mode    uint32 `json:"mode"`
	Owner   string `json:"owner,omitempty"`
	Group   string `json:"group,omitempty"`
	Parents bool   `json:"parents,omitempty"`
}

// FSRemoveRequest removes a path; never follows a symlink. A non-empty
// directory needs Recursive.
type FSRemoveRequest struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

// FSChownRequest changes ownership (lchown semantics). Empty = unchanged.
type FSChownRequest struct {
	Path  string `json:"path"`
	Owner string `json:"owner,omitempty"`
	Group string `json:"group,omitempty"`
}

// FSChmodRequest changes permission bits.
type FSChmodRequest struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
}

// FSListRequest lists a directory.
type FSListRequest struct {
	Path string `json:"path"`
}

// FSListResponse holds the entries sorted by name.
type FSListResponse struct {
	Entries []DirEntry `json:"entries"`
}

// DirEntry is one directory entry.
type DirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // file, directory, symlink, other
}

// ExecRequest runs a program without a shell (Argv) or through /bin/sh -c
// (Shell with Command). The child gets exactly Env (nothing inherited from
// the host), runs in Cwd ("" = "/"), in its own process group, killed as a
// group when TimeoutMS passes. A bare Argv[0] is looked up in the PATH entry
// of Env. The grant is matched on the resolved absolute executable.
//
// Probe marks a read-only command. In read-only modes (ccm_status, noop,
// health-check-only) the host runs only probes whose command line is either
// one of the string values of the calling resource's properties (a guard the
// manifest author wrote, such as exec onlyif) or starts with one of the
// plugin's Capabilities.ProbeExec prefixes.
type ExecRequest struct {
	Argv      []string `json:"argv,omitempty"`
	Command   string   `json:"command,omitempty"`
	Shell     bool     `json:"shell,omitempty"`
	Env       []string `json:"env,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	TimeoutMS int64    `json:"timeout_ms,omitempty"` // 0 = no timeout beyond the call's deadline
	Stdin     []byte   `json:"stdin,omitempty"`
	MaxOutput int64    `json:"max_output,omitempty"` // per stream; 0 = host default
	Probe     bool     `json:"probe,omitempty"`
}

// ExecResponse is the outcome of a program that started. A program that could
// not start (not found, permission) is a CallError instead.
type ExecResponse struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// UserLookupRequest finds a user by name or numeric id (one of them).
type UserLookupRequest struct {
	Name string `json:"name,omitempty"`
	ID   string `json:"id,omitempty"`
}

// UserLookupResponse describes a user.
type UserLookupResponse struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Home string `json:"home,omitempty"`
}

// GroupLookupRequest finds a group by name or numeric id.
type GroupLookupRequest struct {
	Name string `json:"name,omitempty"`
	ID   string `json:"id,omitempty"`
}

// GroupLookupResponse describes a group.
type GroupLookupResponse struct {
	Name string `json:"name"`
	GID  int    `json:"gid"`
}

// LookupRequest reads a GJSON path from {"facts", "data", "environ"}.
type LookupRequest struct {
	Path string `json:"path"`
}

// LookupResponse holds the value; Found is false for a missing path.
type LookupResponse struct {
	Found bool `json:"found"`
	Value any  `json:"value,omitempty"`
}

// LogRequest writes a line to the host log, attributed to the calling type#name.
type LogRequest struct {
	Level   string `json:"level"` // debug, info, warn, error
	Message string `json:"message"`
}

// Empty is the Ok document of calls that return nothing.
type Empty struct{}
