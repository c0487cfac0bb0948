package hostcall

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// The stat of every stable file is a ccm_fs_stat: its request and its
// answer are the host calls' most frequent documents. encoding/json spends
// more on them (reflection, a Decoder and a scanner per request) than the
// stat's own work outside the syscalls, so the two have a direct path here
// that gives exactly what encoding/json gives (TestStatJSONMatches,
// FuzzStatRequest).

// decodeStatRequest decodes the canonical form of a stat request, the one
// the SDK writes: {"path":"..."} then ,"follow_symlinks":true and
// ,"checksum":true when set, no spaces, a path of printable ASCII without
// escapes. It reports false for anything else, which decodeRequest then
// decodes (and refuses) as before.
func decodeStatRequest(raw []byte, req *abi.FSStatRequest) bool {
	const head = `{"path":"`
	if !bytes.HasPrefix(raw, []byte(head)) {
		return false
	}
	rest := raw[len(head):]
	end := -1
	for i, c := range rest {
		if c == '"' {
			end = i
			break
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	if end < 0 {
		return false
	}
	path := rest[:end]
	rest = rest[end+1:]
	var r abi.FSStatRequest
	if b, ok := bytes.CutPrefix(rest, []byte(`,"follow_symlinks":true`)); ok {
		r.FollowSymlinks, rest = true, b
	}
	if b, ok := bytes.CutPrefix(rest, []byte(`,"checksum":true`)); ok {
		r.Checksum, rest = true, b
	}
	if len(rest) != 1 || rest[0] != '}' {
		return false
	}
	r.Path = string(path)
	*req = r
	return true
}

// AppendStatResponse appends r as json.Marshal writes it.
func AppendStatResponse(dst []byte, r abi.FSStatResponse) []byte {
	dst = append(dst, `{"exists":`...)
	dst = strconv.AppendBool(dst, r.Exists)
	if r.Type != "" {
		dst = AppendJSONString(append(dst, `,"type":`...), r.Type)
	}
	if r.Mode != 0 {
		dst = strconv.AppendUint(append(dst, `,"mode":`...), uint64(r.Mode), 10)
	}
	dst = strconv.AppendInt(append(dst, `,"uid":`...), int64(r.UID), 10)
	dst = strconv.AppendInt(append(dst, `,"gid":`...), int64(r.GID), 10)
	if r.Owner != "" {
		dst = AppendJSONString(append(dst, `,"owner":`...), r.Owner)
	}
	if r.Group != "" {
		dst = AppendJSONString(append(dst, `,"group":`...), r.Group)
	}
	if r.Size != 0 {
		dst = strconv.AppendInt(append(dst, `,"size":`...), r.Size, 10)
	}
	if r.MTime != 0 {
		dst = strconv.AppendInt(append(dst, `,"mtime":`...), r.MTime, 10)
	}
	if r.SHA256 != "" {
		dst = AppendJSONString(append(dst, `,"sha256":`...), r.SHA256)
	}
	if r.LinkTarget != "" {
		dst = AppendJSONString(append(dst, `,"link_target":`...), r.LinkTarget)
	}
	return append(dst, '}')
}

// AppendJSONString appends s as encoding/json writes a string: as it is
// when it is printable ASCII with nothing to escape, else by json.Marshal
// (its escapes, HTML-safe, and invalid UTF-8 replaced).
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
