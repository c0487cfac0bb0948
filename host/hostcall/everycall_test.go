package hostcall

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// everyCallRequests is one request per host call, each one that succeeds
// for an unconfined apply and would change dir if it ran. A host call added
// to Handlers without an entry here fails TestEveryHostCallIsChecked.
func everyCallRequests(dir, url string) map[string]any {
	f := filepath.Join(dir, "f")
	return map[string]any{
		abi.CallFSStat:      abi.FSStatRequest{Path: f, Checksum: true},
		abi.CallFSRead:      abi.FSReadRequest{Path: f},
		abi.CallFSWrite:     abi.FSWriteRequest{Path: filepath.Join(dir, "new"), Content: []byte("x"), Mode: 0o644},
		abi.CallFSMkdir:     abi.FSMkdirRequest{Path: filepath.Join(dir, "d", "e"), Mode: 0o755, Parents: true},
		abi.CallFSRemove:    abi.FSRemoveRequest{Path: filepath.Join(dir, "gone")},
		abi.CallFSChown:     abi.FSChownRequest{Path: f, Owner: "root"},
		abi.CallFSChmod:     abi.FSChmodRequest{Path: f, Mode: 0o600},
		abi.CallFSList:      abi.FSListRequest{Path: dir},
		abi.CallExec:        abi.ExecRequest{Argv: []string{"/bin/sh", "-c", "echo ran >" + filepath.Join(dir, "ran")}},
		abi.CallUserLookup:  abi.UserLookupRequest{Name: "root"},
		abi.CallGroupLookup: abi.GroupLookupRequest{ID: "0"},
		abi.CallLookup:      abi.LookupRequest{Path: "facts.x"},
		abi.CallLog:         abi.LogRequest{Level: "info", Message: "m"},
		abi.CallNetFetch:    abi.NetFetchRequest{URL: url, Dest: filepath.Join(dir, "new")},
	}
}

// TestEveryHostCallIsChecked runs every entry of the registration table
// (Handlers) and fails unless it passed allowed, the one check: with every
// grant, each call succeeds and allowed saw it; during ccm_validate, which
// may not touch the system, each call that needs a capability is refused
// by allowed and the directory it would change is unchanged, so the check
// came before the OS work. Not parallel: it sets the checked hook.
func TestEveryHostCallIsChecked(t *testing.T) {
	table := Handlers()
	dir := tempDir(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("body")) }))
	t.Cleanup(srv.Close)
	reqs := everyCallRequests(dir, srv.URL)
	if got, want := slices.Sorted(maps.Keys(table)), slices.Sorted(maps.Keys(reqs)); !slices.Equal(got, want) {
		t.Fatalf("Handlers registers %v; this test has requests for %v: give every host call a request here", got, want)
	}
	var seen []string
	checked = func(call string) { seen = append(seen, call) }
	t.Cleanup(func() { checked = nil })

	caps := trust.All()
	validate := &State{Export: abi.ExportValidate, Type: "t", Caller: trust.Caller{Mode: trust.ModeApply}, Caps: &caps, Names: &NameCache{}}
	apply := *validate
	apply.Export, apply.HostCalls, apply.RequestBytes, apply.ExecOutputBytes = abi.ExportApply, true, 1<<20, 1<<20
	reset := func() {
		for _, name := range []string{"new", "d", "ran"} {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		mustWrite(t, filepath.Join(dir, "f"), "content", 0o644)
		mustWrite(t, filepath.Join(dir, "gone"), "remove me", 0o644)
	}
	for _, call := range slices.Sorted(maps.Keys(table)) {
		raw, err := json.Marshal(reqs[call])
		if err != nil {
			t.Fatal(err)
		}
		t.Run(call, func(t *testing.T) {
			reset()
			before := fstree.Describe(t, dir)
			seen = nil
			_, cerr := table[call](context.Background(), validate, raw)
			if !slices.Contains(seen, call) {
				t.Fatalf("during ccm_validate, %s did not pass allowed (checked: %v)", call, seen)
			}
			if _, _, open := callKind(call); !open {
				if cerr == nil || cerr.Code != abi.CodeDenied || !strings.Contains(cerr.Message, "not available during") {
					t.Fatalf("during ccm_validate, %s answered %v, want the check's refusal", call, cerr)
				}
				if after := fstree.Describe(t, dir); after != before {
					t.Fatalf("refused %s changed %s:\n%s\nwas\n%s", call, dir, after, before)
				}
			}

			reset()
			seen = nil
			if _, cerr := table[call](context.Background(), &apply, raw); cerr != nil {
				t.Fatalf("unconfined apply: %s failed: %v", call, cerr)
			}
			if !slices.Contains(seen, call) {
				t.Fatalf("%s did not pass allowed (checked: %v)", call, seen)
			}
		})
	}
}
