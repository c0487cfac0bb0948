package main

// Filesystem attacks (docs/security.md, "Filesystem"): single host calls on
// planted hard links, FIFOs and privilege bits ("fs_op"), and a loop of
// every filesystem call through a directory the test swaps for a symlink to
// the sentinel tree while ccm runs ("fs_race"). Registered from init so they
// stay apart from the attacks in main.go.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk/abi"
)

func init() {
	attacks["fs_op"] = fsOp
	attacks["fs_race"] = fsRace
}

func (p props) num(k string) int {
	f, _ := p[k].(float64)
	return int(f)
}

// fsOp makes one filesystem host call, chosen by "op", on "path" (and
// "source", "mode"). It returns the host's error; a read that succeeds
// returns what it read, so the test sees any leak.
func fsOp(p props) string {
	path, mode := p.str("path"), uint32(p.num("mode"))
	var call string
	var req any
	switch op := p.str("op"); op {
	case "read":
		call, req = abi.CallFSRead, abi.FSReadRequest{Path: path}
	case "checksum":
		call, req = abi.CallFSStat, abi.FSStatRequest{Path: path, Checksum: true}
	case "chmod":
		call, req = abi.CallFSChmod, abi.FSChmodRequest{Path: path, Mode: mode}
	case "chown":
		call, req = abi.CallFSChown, abi.FSChownRequest{Path: path, Owner: p.str("owner")}
	case "write":
		call, req = abi.CallFSWrite, abi.FSWriteRequest{Path: path, Content: []byte("hostile\n"), Source: p.str("source"), Mode: mode}
	case "mkdir":
		call, req = abi.CallFSMkdir, abi.FSMkdirRequest{Path: path, Mode: mode, Parents: true}
	default:
		return "unknown op " + op
	}
	resp, err := fsHostCall(call, req)
	if e := callErr(call, resp, err); e != "" {
		return e
	}
	return fmt.Sprintf("%s %s succeeded: %s", call, path, resp.Ok)
}

// fsRace makes "count" filesystem calls on files in "dir", which the test
// keeps swapping between a granted directory and a symlink to the sentinel
// tree ("leak" is a string of the sentinel's shadow). It reports how many
// acted and how many were refused, and any outside content it read.
func fsRace(p props) string {
	dir, leak := p.str("dir"), p.str("leak")
	var acted, refused int
	var leaks []string
	for i := range p.num("count") {
		var call string
		var req any
		switch i % 8 {
		case 0:
			call, req = abi.CallFSWrite, abi.FSWriteRequest{Path: dir + "/pwned", Content: []byte("pwned\n"), Mode: 0o666}
		case 1:
			call, req = abi.CallFSChmod, abi.FSChmodRequest{Path: dir + "/shadow", Mode: 0o666}
		case 2:
			call, req = abi.CallFSChown, abi.FSChownRequest{Path: dir + "/shadow", Owner: "4242", Group: "4242"}
		case 3:
			call, req = abi.CallFSRead, abi.FSReadRequest{Path: dir + "/shadow"}
		case 4:
			call, req = abi.CallFSMkdir, abi.FSMkdirRequest{Path: dir + "/sub/deeper/pwned", Mode: 0o777, Parents: true}
		case 5:
			call, req = abi.CallFSRemove, abi.FSRemoveRequest{Path: dir + "/sub", Recursive: true}
		case 6:
			call, req = abi.CallFSList, abi.FSListRequest{Path: dir + "/sub"}
		case 7:
			call, req = abi.CallFSRemove, abi.FSRemoveRequest{Path: dir + "/passwd"}
		}
		resp, err := fsHostCall(call, req)
		if callErr(call, resp, err) != "" {
			refused++
			continue
		}
		acted++
		if call == abi.CallFSRead {
			var r abi.FSReadResponse
			if json.Unmarshal(resp.Ok, &r) == nil && leak != "" && strings.Contains(string(r.Content), leak) {
				leaks = append(leaks, call+" read "+leak)
			}
		}
		if call == abi.CallFSList {
			var l abi.FSListResponse
			if json.Unmarshal(resp.Ok, &l) == nil {
				for _, e := range l.Entries {
					if e.Name == "notes.txt" || e.Name == "shadow-link" {
						leaks = append(leaks, call+" saw "+e.Name)
					}
				}
			}
		}
	}
	if len(leaks) > 0 {
		return "fs_race: LEAKED outside content: " + strings.Join(leaks, ", ")
	}
	return fmt.Sprintf("fs_race: %d calls: %d acted inside the grant, %d refused or failed; nothing outside read", p.num("count"), acted, refused)
}
