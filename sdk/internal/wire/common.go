package wire

// maxCommon is the length of the longest word in commonWords.
const maxCommon = 17

// commonWords are the words a guest decodes for every resource: every JSON
// key of the abi documents, the built-in types' common property names and a
// few of their values, sorted by length, then bytewise.
// TestCommonKnowsABIKeys keeps the list in step with sdk/abi.
var commonWords = [...]string{
	"id",
	"ok",
	"abi",
	"cwd",
	"env",
	"gid",
	"net",
	"uid",
	"url",
	"0444",
	"0555",
	"0600",
	"0640",
	"0644",
	"0700",
	"0750",
	"0755",
	"argv",
	"body",
	"code",
	"dest",
	"diff",
	"exec",
	"file",
	"home",
	"lock",
	"mode",
	"name",
	"noop",
	"part",
	"path",
	"root",
	"size",
	"type",
	"batch",
	"chunk",
	"error",
	"force",
	"found",
	"group",
	"level",
	"mtime",
	"other",
	"owner",
	"posix",
	"probe",
	"setid",
	"shell",
	"state",
	"stdin",
	"users",
	"value",
	"absent",
	"enable",
	"ensure",
	"errors",
	"exists",
	"guards",
	"handle",
	"latest",
	"method",
	"offset",
	"sha256",
	"source",
	"status",
	"stderr",
	"stdout",
	"changed",
	"command",
	"content",
	"enabled",
	"entries",
	"fs_read",
	"handles",
	"headers",
	"message",
	"parents",
	"present",
	"refresh",
	"results",
	"running",
	"stopped",
	"symlink",
	"version",
	"written",
	"checksum",
	"deferred",
	"fs_write",
	"messages",
	"no_state",
	"password",
	"provider",
	"requests",
	"username",
	"directory",
	"exit_code",
	"hide_diff",
	"installed",
	"max_bytes",
	"providers",
	"recursive",
	"refreshed",
	"show_diff",
	"timed_out",
	"truncated",
	"max_output",
	"probe_exec",
	"properties",
	"timeout_ms",
	"duration_ns",
	"link_target",
	"working_dir",
	"capabilities",
	"final_ensure",
	"noop_message",
	"after_changes",
	"max_redirects",
	"default_ensure",
	"follow_symlinks",
	"stop_on_failure",
	"health_check_only",
	"properties_schema",
}

// common returns the constant string equal to b when b is in commonWords:
// a binary search, mostly on lengths (as the compiler orders a string
// switch), whose comparisons do not allocate. (A switch with a case
// per word did the same but added 31 KB of code to every guest, which each
// run validates and loads.)
func common(b []byte) (string, bool) {
	lo, hi := 0, len(commonWords)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w := commonWords[m]; len(w) < len(b) || len(w) == len(b) && w < string(b) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(commonWords) && commonWords[lo] == string(b) {
		return commonWords[lo], true
	}
	return "", false
}
