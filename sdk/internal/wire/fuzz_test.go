package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// decodeTargets are the types the guest decodes; the fuzzer's first byte
// picks one.
var decodeTargets = []func() any{
	func() any { return new(abi.Request) },
	func() any { return new(abi.ValidateRequest) },
	func() any { return new(abi.ValidateBatchRequest) },
	func() any { return new(abi.BatchRequest) },
	func() any { return new(abi.Response) },
	func() any { return new(abi.FSStatResponse) },
	func() any { return new(abi.FSReadResponse) },
	func() any { return new(abi.FSListResponse) },
	func() any { return new(abi.ExecResponse) },
	func() any { return new(abi.UserLookupResponse) },
	func() any { return new(abi.GroupLookupResponse) },
	func() any { return new(abi.LookupResponse) },
	func() any { return new(any) },
}

// FuzzUnmarshal holds wire's decoder to encoding/json's: the same inputs
// fail, and the others decode to equal values. Inputs with a key that is not
// lowercase ASCII are skipped: encoding/json matches keys case-insensitively
// and wire, by design, does not.
func FuzzUnmarshal(f *testing.F) {
	for i, s := range []string{
		`{"type":"file","name":"/x","properties":{"a":[1,"b",null,true,{"c":1.5}]},"noop":true,"working_dir":"/"}`,
		`{"properties":{"n":1}}`,
		`{"requests":[{"properties":{}}]}`,
		`{"requests":[{"name":"a"}],"stop_on_failure":true}`,
		`{"ok":{"x":1},"error":{"code":"denied","message":"m"}}`,
		`{"exists":true,"mode":420,"uid":0,"size":12,"sha256":"ab"}`,
		`{"content":"YWJj"}`,
		`{"entries":[{"name":"a","type":"file"}]}`,
		`{"exit_code":1,"stdout":"\u00e9\ud83d\ude00","timed_out":true}`,
		`{"name":"root","uid":0,"gid":0,"home":"/root"}`,
		`{"name":"g","gid":1}`,
		`{"found":true,"value":{"a":[1e3]}}`,
		`[1, -0.5e-3, "x\"y", null, {"k": false}]`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		if !lowercaseKeys(data) {
			t.Skip()
		}
		target := decodeTargets[int(which)%len(decodeTargets)]
		got, want := target(), target()
		gotErr := Unmarshal(data, got)
		wantErr := json.Unmarshal(data, want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%T %q: error %v, encoding/json error %v", got, data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%T %q:\ngot  %#v\nwant %#v", got, data, got, want)
		}
	})
}

// lowercaseKeys reports whether every object key in data is lowercase
// ASCII (true for unparsable data: then only errors are compared).
func lowercaseKeys(data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var stack []bool // true = in an object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, true)
				expectKey = true
				continue
			case '[':
				stack = append(stack, false)
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				for _, c := range []byte(tok) {
					if c >= 0x80 || (c >= 'A' && c <= 'Z') {
						return false
					}
				}
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1] && !expectKey
	}
}

// FuzzMarshal checks what wire writes for arbitrary decoded documents reads
// back, with encoding/json, as the value it was given.
func FuzzMarshal(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x\u2028",null,true,{"b":{}}],"c":-1e-9}`))
	f.Add([]byte(`"\ud83d"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			t.Skip()
		}
		sameJSON(t, v)
		sameJSON(t, abi.Result{State: map[string]any{"v": v}, Error: string(data)})
	})
}

// FuzzUnmarshalResponse holds the one-pass UnmarshalResponse to the two
// passes it replaces (Unmarshal into an abi.Response, then its Ok into the
// target), for documents the host can write: one top-level "ok" or "error",
// each at most once.
func FuzzUnmarshalResponse(f *testing.F) {
	for i, s := range []string{
		`{"ok":{"exists":true,"mode":420,"uid":0,"size":12,"sha256":"ab","owner":"r\u00e9"}}`,
		`{"error":{"code":"denied","message":"m"}}`,
		`{"ok":null}`,
		`{"error":null,"ok":{"content":"YWJj"}}`,
		`{"ok":{"entries":[{"name":"a","type":"file"}]}}`,
		`{"ok":{"found":true,"value":[1,{"a":"b"}]}}`,
		`{"ok":{"exists":"yes"}}`,
		`{"ok":{}`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		if !lowercaseKeys(data) || !hostShaped(data) {
			t.Skip()
		}
		target := decodeTargets[int(which)%len(decodeTargets)]
		got, want := target(), target()

		callErr, gotErr := UnmarshalResponse(data, got)

		var r abi.Response
		wantErr := Unmarshal(data, &r)
		if wantErr == nil && r.Error == nil {
			wantErr = Unmarshal(r.Ok, want)
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%T %q: error %v, two passes: %v", got, data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		if !reflect.DeepEqual(callErr, r.Error) {
			t.Fatalf("%q: call error %#v, two passes: %#v", data, callErr, r.Error)
		}
		if r.Error == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%T %q:\ngot  %#v\nwant %#v", got, data, got, want)
		}
	})
}

// hostShaped reports whether data is an object with exactly one of the
// top-level keys "ok" and "error" (not null), once (true for unparsable
// data: then only errors are compared).
func hostShaped(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return true
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	depth, keys := 0, map[string]int{}
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				depth++
				expectKey = tok == '{' && depth == 1
				continue
			}
			depth--
		case string:
			if depth == 1 && expectKey {
				keys[tok]++
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
	for _, n := range keys {
		if n > 1 {
			return false
		}
	}
	_, ok := top["ok"]
	e, bad := top["error"]
	return ok != bad && string(e) != "null"
}
