package hostcall

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

var statStrings = []string{"", "a", "/etc/motd", "root", "1000", "fïle", "a\"b", `a\b`, "<>&", "\x00\x1f", "\u2028", "\xff\xfe", "tab\there", "~", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}

// TestStatJSONMatches: the stat request's direct decoding and the answer's
// direct encoding give what encoding/json gives.
func TestStatJSONMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return statStrings[r.IntN(len(statStrings))] }
	nums := []int64{0, 1, -1, 420, 1 << 40, -1 << 62}
	for range 5000 {
		resp := abi.FSStatResponse{Exists: r.IntN(2) == 0, Type: pick(), Mode: uint32(r.Uint64()), UID: int(nums[r.IntN(len(nums))]), GID: int(nums[r.IntN(len(nums))]),
			Owner: pick(), Group: pick(), Size: nums[r.IntN(len(nums))], MTime: nums[r.IntN(len(nums))], SHA256: pick(), LinkTarget: pick()}
		if r.IntN(3) == 0 {
			resp.Mode = 0
		}
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendStatResponse(nil, resp); !bytes.Equal(got, want) {
			t.Fatalf("AppendStatResponse(%#v)\n got %s\nwant %s", resp, got, want)
		}

		req := abi.FSStatRequest{Path: pick(), FollowSymlinks: r.IntN(2) == 0, Checksum: r.IntN(2) == 0}
		raw, _ := json.Marshal(req)
		checkStatRequest(t, raw)
	}
	for _, raw := range []string{
		`{"path":"/a","checksum":true}`, `{"path":"/a","follow_symlinks":true,"checksum":true}`, `{"path":"/a"}`,
		`{"path":"/a","checksum":true} `, `{"path":"/a","checksum":true}{}`, `{"path":"/a","Checksum":true}`, `{"PATH":"/a"}`,
		`{"path":"/a","checksum":false}`, `{"path":"/a","checksum":true,"checksum":false}`, `{"path":"/a","x":1}`,
		`{"path":"\u002fa"}`, `{"path":"/a","checksum":true,"follow_symlinks":true}`, `{"path":"/a"`, `{"path":"/a}`, `{"path":"`, ``,
	} {
		checkStatRequest(t, []byte(raw))
	}
	if !decodeStatRequest([]byte(`{"path":"/etc/motd","checksum":true}`), new(abi.FSStatRequest)) {
		t.Fatal("the SDK's form of a stat request does not take the direct path")
	}
}

// checkStatRequest fails when decodeStatRequest accepts raw and decodes it
// to anything but what decodeRequest does.
func checkStatRequest(t *testing.T, raw []byte) {
	t.Helper()
	var fast abi.FSStatRequest
	if !decodeStatRequest(raw, &fast) {
		return
	}
	var slow abi.FSStatRequest
	if cerr := decodeRequest(raw, &slow); cerr != nil {
		t.Fatalf("decodeStatRequest accepted %s, which decodeRequest refuses: %s", raw, cerr.Message)
	}
	if fast != slow {
		t.Fatalf("decodeStatRequest(%s) = %#v, decodeRequest %#v", raw, fast, slow)
	}
}

// FuzzStatRequest: what decodeStatRequest accepts, decodeRequest decodes
// the same way.
func FuzzStatRequest(f *testing.F) {
	for _, s := range []string{`{"path":"/a","checksum":true}`, `{"path":"/a","follow_symlinks":true,"checksum":true}`, `{"path":"/a"}`, `{"path":"/a","Checksum":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkStatRequest(t, raw) })
}
