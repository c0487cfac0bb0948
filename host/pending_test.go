package host

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestPendingWritesInOneCall: in one real plugin call, writes whose fsync
// runs in the background are seen by the calls after them (a stat with
// its checksum, a read, a list with no temp file in it, a second write of
// the same file), and every one is in place when the call returns.
func TestPendingWritesInOneCall(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	caller := trust.Caller{Grants: grantDir(t, dir)}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	w := func(p, c string) hc {
		return hc{abi.CallFSWrite, abi.FSWriteRequest{Path: p, Content: []byte(c), Mode: 0o640}}
	}
	r := apply(t, h, caller,
		w(a, "one"),
		w(b, "bee"),
		hc{abi.CallFSStat, abi.FSStatRequest{Path: a, Checksum: true}},
		w(a, "two"),
		hc{abi.CallFSRead, abi.FSReadRequest{Path: a}},
		w(b, "bee2"),
		hc{abi.CallFSList, abi.FSListRequest{Path: dir}},
		w(a, "three"),
	)
	var st abi.FSStatResponse
	okInto(t, r[2], &st)
	sum := sha256.Sum256([]byte("one"))
	if !st.Exists || st.Type != "file" || st.Mode != 0o640 || st.Size != 3 || st.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("stat after a write: %+v", st)
	}
	var rd abi.FSReadResponse
	okInto(t, r[4], &rd)
	if string(rd.Content) != "two" {
		t.Fatalf("read after a second write: %q", rd.Content)
	}
	var ls abi.FSListResponse
	okInto(t, r[6], &ls)
	var names []string
	for _, e := range ls.Entries {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("list after writes: %v", names)
	}
	for p, want := range map[string]string{a: "three", b: "bee2"} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Fatalf("%s after the call: %q %v, want %q", p, got, err, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("after the call: %d entries (a temp file left?)", len(ents))
	}
}
