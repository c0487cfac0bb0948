package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// fuzzCalls are the host calls FuzzDispatch feeds; the first input byte
// picks one.
var fuzzCalls = []string{
	abi.CallFSStat, abi.CallFSRead, abi.CallFSWrite, abi.CallFSMkdir, abi.CallFSRemove,
	abi.CallFSChown, abi.CallFSChmod, abi.CallFSList, abi.CallExec, abi.CallUserLookup,
	abi.CallGroupLookup, abi.CallLookup, abi.CallLog,
}

// FuzzDispatch feeds arbitrary request documents to every host call, in
// status mode over a grant of one temp dir (so nothing can be changed and no
// process started), and checks each answer is a well-formed Response.
func FuzzDispatch(f *testing.F) {
	dir := f.TempDir()
	mustWrite(f, filepath.Join(dir, "f"), "content", 0o644)
	seeds := map[string]any{
		abi.CallFSStat:      abi.FSStatRequest{Path: filepath.Join(dir, "f"), Checksum: true, FollowSymlinks: true},
		abi.CallFSRead:      abi.FSReadRequest{Path: filepath.Join(dir, "f"), MaxBytes: 3},
		abi.CallFSWrite:     abi.FSWriteRequest{Path: filepath.Join(dir, "g"), Content: []byte("x"), Mode: 0o644, Owner: "0"},
		abi.CallFSMkdir:     abi.FSMkdirRequest{Path: filepath.Join(dir, "d"), Mode: 0o755, Parents: true},
		abi.CallFSRemove:    abi.FSRemoveRequest{Path: filepath.Join(dir, "f"), Recursive: true},
		abi.CallFSChown:     abi.FSChownRequest{Path: filepath.Join(dir, "f"), Owner: "root"},
		abi.CallFSChmod:     abi.FSChmodRequest{Path: filepath.Join(dir, "f"), Mode: 0o600},
		abi.CallFSList:      abi.FSListRequest{Path: dir},
		abi.CallExec:        abi.ExecRequest{Argv: []string{"id"}, Probe: true, Env: []string{"PATH=/usr/bin"}},
		abi.CallUserLookup:  abi.UserLookupRequest{Name: "root"},
		abi.CallGroupLookup: abi.GroupLookupRequest{ID: "0"},
		abi.CallLookup:      abi.LookupRequest{Path: "facts.x"},
		abi.CallLog:         abi.LogRequest{Level: "info", Message: "m"},
	}
	for i, call := range fuzzCalls {
		b, err := json.Marshal(seeds[call])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(0), []byte(`{"path": "/etc/passwd"} {}`))
	f.Add(uint8(2), []byte(`{"path": "/x", "unknown": 1}`))
	f.Add(uint8(1), []byte(`null`))

	table := hostcall.Handlers()
	caps := trust.All()
	st := newCallState(abi.ExportStatus, "fuzz",
		trust.Caller{Mode: trust.ModeStatus, Grants: grantDir(f, dir), Lookup: func(string) (any, bool) { return nil, false }},
		DefaultLimits())
	st.Caps, st.HostCalls = &caps, true
	codes := map[string]bool{abi.CodeDenied: true, abi.CodeNotFound: true, abi.CodeExists: true, abi.CodeInvalid: true,
		abi.CodeIO: true, abi.CodeTimeout: true, abi.CodeTooLarge: true}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		call := fuzzCalls[int(which)%len(fuzzCalls)]
		resp := dispatch(context.Background(), st, table, call, raw)
		switch {
		case (resp.Ok == nil) == (resp.Error == nil):
			t.Fatalf("%s %q: want exactly one of ok and error, got %+v", call, raw, resp)
		case resp.Error != nil && !codes[resp.Error.Code]:
			t.Fatalf("%s %q: unknown error code %q", call, raw, resp.Error.Code)
		case resp.Ok != nil && !json.Valid(resp.Ok):
			t.Fatalf("%s %q: invalid ok document %q", call, raw, resp.Ok)
		}
		if hostcall.Mutating(call) && resp.Error == nil {
			t.Fatalf("%s %q: a mutating call succeeded in status mode", call, raw)
		}
	})
}
