package wire

// maxCommon is the length of the longest word common knows.
const maxCommon = 17

// common returns the constant string equal to b when b is one of the words
// a guest decodes for every resource: every JSON key of the abi documents,
// the built-in types' common property names and a few of their values.
// TestCommonKnowsABIKeys keeps it in step with sdk/abi.
func common(b []byte) (string, bool) {
	switch string(b) { // compiled to comparisons, no allocation
	case "0444":
		return "0444", true
	case "0555":
		return "0555", true
	case "0600":
		return "0600", true
	case "0640":
		return "0640", true
	case "0644":
		return "0644", true
	case "0700":
		return "0700", true
	case "0750":
		return "0750", true
	case "0755":
		return "0755", true
	case "abi":
		return "abi", true
	case "absent":
		return "absent", true
	case "after_changes":
		return "after_changes", true
	case "argv":
		return "argv", true
	case "batch":
		return "batch", true
	case "body":
		return "body", true
	case "capabilities":
		return "capabilities", true
	case "changed":
		return "changed", true
	case "checksum":
		return "checksum", true
	case "chunk":
		return "chunk", true
	case "code":
		return "code", true
	case "command":
		return "command", true
	case "content":
		return "content", true
	case "cwd":
		return "cwd", true
	case "default_ensure":
		return "default_ensure", true
	case "deferred":
		return "deferred", true
	case "dest":
		return "dest", true
	case "diff":
		return "diff", true
	case "directory":
		return "directory", true
	case "duration_ns":
		return "duration_ns", true
	case "enable":
		return "enable", true
	case "enabled":
		return "enabled", true
	case "ensure":
		return "ensure", true
	case "entries":
		return "entries", true
	case "env":
		return "env", true
	case "error":
		return "error", true
	case "errors":
		return "errors", true
	case "exec":
		return "exec", true
	case "exists":
		return "exists", true
	case "exit_code":
		return "exit_code", true
	case "file":
		return "file", true
	case "final_ensure":
		return "final_ensure", true
	case "follow_symlinks":
		return "follow_symlinks", true
	case "force":
		return "force", true
	case "found":
		return "found", true
	case "fs_read":
		return "fs_read", true
	case "fs_write":
		return "fs_write", true
	case "gid":
		return "gid", true
	case "group":
		return "group", true
	case "guards":
		return "guards", true
	case "headers":
		return "headers", true
	case "health_check_only":
		return "health_check_only", true
	case "hide_diff":
		return "hide_diff", true
	case "home":
		return "home", true
	case "id":
		return "id", true
	case "installed":
		return "installed", true
	case "latest":
		return "latest", true
	case "level":
		return "level", true
	case "link_target":
		return "link_target", true
	case "lock":
		return "lock", true
	case "max_bytes":
		return "max_bytes", true
	case "max_output":
		return "max_output", true
	case "max_redirects":
		return "max_redirects", true
	case "message":
		return "message", true
	case "messages":
		return "messages", true
	case "method":
		return "method", true
	case "mode":
		return "mode", true
	case "mtime":
		return "mtime", true
	case "name":
		return "name", true
	case "net":
		return "net", true
	case "no_state":
		return "no_state", true
	case "noop":
		return "noop", true
	case "noop_message":
		return "noop_message", true
	case "offset":
		return "offset", true
	case "ok":
		return "ok", true
	case "other":
		return "other", true
	case "owner":
		return "owner", true
	case "parents":
		return "parents", true
	case "part":
		return "part", true
	case "password":
		return "password", true
	case "path":
		return "path", true
	case "posix":
		return "posix", true
	case "present":
		return "present", true
	case "probe":
		return "probe", true
	case "probe_exec":
		return "probe_exec", true
	case "properties":
		return "properties", true
	case "properties_schema":
		return "properties_schema", true
	case "provider":
		return "provider", true
	case "providers":
		return "providers", true
	case "recursive":
		return "recursive", true
	case "refresh":
		return "refresh", true
	case "refreshed":
		return "refreshed", true
	case "requests":
		return "requests", true
	case "results":
		return "results", true
	case "root":
		return "root", true
	case "running":
		return "running", true
	case "setid":
		return "setid", true
	case "sha256":
		return "sha256", true
	case "shell":
		return "shell", true
	case "show_diff":
		return "show_diff", true
	case "size":
		return "size", true
	case "source":
		return "source", true
	case "state":
		return "state", true
	case "status":
		return "status", true
	case "stderr":
		return "stderr", true
	case "stdin":
		return "stdin", true
	case "stdout":
		return "stdout", true
	case "stop_on_failure":
		return "stop_on_failure", true
	case "stopped":
		return "stopped", true
	case "symlink":
		return "symlink", true
	case "timed_out":
		return "timed_out", true
	case "timeout_ms":
		return "timeout_ms", true
	case "truncated":
		return "truncated", true
	case "type":
		return "type", true
	case "uid":
		return "uid", true
	case "url":
		return "url", true
	case "username":
		return "username", true
	case "users":
		return "users", true
	case "value":
		return "value", true
	case "version":
		return "version", true
	case "working_dir":
		return "working_dir", true
	case "written":
		return "written", true
	}
	return "", false
}
