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
	CallNetFetch    = "ccm_net_fetch"
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
	// Chunk reads at most MaxBytes (or the limit) from Offset on, however
	// large the file: one piece of a file read piece by piece (a short or
	// empty answer is its end). Without it the whole file is read, and one
	// larger than the limit is refused (too_large).
	Chunk  bool  `json:"chunk,omitempty"`
	Offset int64 `json:"offset,omitempty"`
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
	// Part writes a file too large for one request in pieces, within one
	// plugin call: "first" starts a hidden staging file beside Path with
	// Content, "next" appends Content, "last" appends Content and then
	// fsyncs, chowns, chmods and renames it over Path as a whole write
	// does (Mode, Owner and Group are those of "last"). "" is a whole
	// write. Source cannot be combined with it.
	Part string `json:"part,omitempty"`
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

// NetFetchRequest asks the host to make one HTTP(S) request: the plugin
// never opens a socket. The URL, and every redirect before it is followed,
// must pass the net grant ("METHOD scheme://host:port", docs/security.md,
// "Network"). TLS is verified against the system's roots. Read-only modes
// (noop, health checks, ccm_status) refuse the call.
//
// With Dest set, a 2xx body streams into that file with the discipline of
// ccm_fs_write (fs_write on Dest; temp file beside it, fsync, chown, chmod,
// rename), its sha256 computed on the way; when SHA256 is set and differs,
// or the body passes MaxBytes, the temp file is removed and Dest is left as
// it was. Without Dest the body comes back in NetFetchResponse.Body (at
// most 1 MiB). A non-2xx answer is not an error: Status says it, nothing
// is written.
type NetFetchRequest struct {
	URL    string `json:"url"`
	Method string `json:"method,omitempty"` // GET (default) or HEAD
	// Headers are "Name: value" lines added to the request.
	Headers []string `json:"headers,omitempty"`
	// Username and Password, when Username is set, send HTTP basic auth.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Dest     string `json:"dest,omitempty"`
	Mode     uint32 `json:"mode,omitempty"` // of Dest; 0 = 0644
	Owner    string `json:"owner,omitempty"`
	Group    string `json:"group,omitempty"`
	SHA256   string `json:"sha256,omitempty"` // expected hex sha256 of the body
	// MaxBytes bounds the body; 0 = the host's limit (1 GiB), larger is
	// lowered to it.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// TimeoutMS bounds the whole request, body included; 0 = 10 minutes.
	// Like an exec's timeout it does not eat into the call's call_timeout.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// MaxRedirects bounds the redirects followed; 0 = 10, -1 = none.
	MaxRedirects int `json:"max_redirects,omitempty"`
}

// NetFetchResponse is the outcome of a request that got an answer.
type NetFetchResponse struct {
	Status int    `json:"status"`
	URL    string `json:"url"` // the final URL, after redirects, without credentials
	// Headers are the answer's headers as "Name: value" lines, sorted.
	Headers []string `json:"headers,omitempty"`
	Size    int64    `json:"size"`              // body bytes read
	SHA256  string   `json:"sha256,omitempty"`  // hex sha256 of the body
	Written bool     `json:"written,omitempty"` // Dest was replaced
	Body    []byte   `json:"body,omitempty"`
}

// Empty is the Ok document of calls that return nothing.
type Empty struct{}
