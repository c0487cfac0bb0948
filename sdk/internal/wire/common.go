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

// common returns the constant string equal to b when b is in commonWords.
// It looks b up in commonTable, whose hash reads four bytes of b at most
// (its length, first, middle and last byte: no loop over b), then compares
// b with one word, rarely two or three; a miss ends at an empty slot.
// (A binary search over commonWords, 7 string comparisons per word, was a
// quarter of decoding a validation request; a map, hashing every byte, was
// slower still, and a switch with a case per word added 31 KB of code to
// every guest, which each run validates and loads.)
func common(b []byte) (string, bool) {
	if len(b) == 0 || len(b) > maxCommon {
		return "", false
	}
	for h := commonHash(b); ; h = (h + 1) & commonMask {
		i := commonTable[h]
		if i == 0 {
			return "", false
		}
		if w := commonWords[i-1]; w == string(b) {
			return w, true
		}
	}
}

// commonMask sizes commonTable: 256 slots for about 120 words keeps the
// probes short (TestCommonTable).
const commonMask = 255

// commonHash is the slot where a word of commonWords is first looked for;
// b must not be empty. Its constants were chosen to spread the words.
func commonHash[T string | []byte](b T) uint {
	n := uint(len(b))
	return (n*38 + uint(b[0]) + uint(b[n-1]) + 7*uint(b[n/2])) & commonMask
}

// commonTable holds, at commonHash of each word or the next free slot
// after it (linear probing), the word's index in commonWords plus one; 0
// is an empty slot. Built once at start-up, read-only afterwards.
var commonTable = func() (t [commonMask + 1]uint8) {
	for i, w := range commonWords {
		h := commonHash(w)
		for t[h] != 0 {
			h = (h + 1) & commonMask
		}
		t[h] = uint8(i + 1)
	}
	return t
}()
