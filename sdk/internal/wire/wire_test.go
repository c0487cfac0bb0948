package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// sameJSON checks wire's encoding of v means what encoding/json's does:
// both parse, to equal values (key order and escaping may differ).
func sameJSON(t *testing.T, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, gotErr := Marshal(v)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%#v: error %v, encoding/json error %v", v, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if !json.Valid(got) {
		t.Fatalf("%#v: invalid JSON %s", v, got)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%#v:\ngot  %s\nwant %s", v, got, want)
	}
}

// Sample documents: every field set, and zero values (omitempty, null).
var encodeSamples = []struct {
	name string
	v    any
}{
	{"PluginInfo zero", abi.PluginInfo{}},
	{"PluginInfo full", abi.PluginInfo{ABI: 1, Type: "file", Version: "1.0.0", Providers: []string{"posix"}, Ensure: []string{"present", "absent"},
		DefaultEnsure: "present", Refresh: true, Batch: true, Lock: "package", Deferred: []string{"content"}, Guards: []string{"onlyif"},
		PropertiesSchema: json.RawMessage("{\n  \"type\": \"object\",\n  \"x\": [1, 2.5, \"a b\"]\n}"),
		Capabilities:     abi.Capabilities{FSRead: []string{"/**"}, FSWrite: []string{"/etc/**"}, Exec: []string{"/bin/sh"}, Net: []string{"*"}, Users: true, ProbeExec: []string{"/usr/bin/id -u"}}}},
	{"PluginInfo empty slices", abi.PluginInfo{Providers: []string{}, Ensure: []string{}, Deferred: []string{}}},
	{"ValidateResponse nil", abi.ValidateResponse{}},
	{"ValidateResponse", abi.ValidateResponse{Errors: []string{"a", "b"}}},
	{"ValidateBatchResponse", abi.ValidateBatchResponse{Results: []abi.ValidateResponse{{}, {Errors: []string{}}, {Errors: []string{"x"}}}}},
	{"ValidateBatchResponse nil", abi.ValidateBatchResponse{}},
	{"StatusResponse zero", abi.StatusResponse{}},
	{"StatusResponse", abi.StatusResponse{Provider: "posix", FinalEnsure: "present", State: map[string]any{"a": 1, "b": []any{"x", 2.5, nil, true}}, Error: "e"}},
	{"Result zero", abi.Result{}},
	{"Result full", abi.Result{Changed: true, Refreshed: true, Provider: "p", FinalEnsure: "absent", NoopMessage: "Would have",
		State: map[string]any{"metadata": map[string]any{"size": int64(12), "mode": "0644", "mtime": "2024-01-01T00:00:00Z"}}, Messages: []string{"m"}, Diff: "--- a\n+++ b\n", Error: "boom", DurationNS: 1234}},
	{"Result empty state", abi.Result{State: map[string]any{}, Messages: []string{}}},
	{"BatchResponse", abi.BatchResponse{Results: []abi.Result{{Changed: true}, {Error: "x"}}}},
	{"FSStatRequest", abi.FSStatRequest{Path: "/etc/motd", FollowSymlinks: true, Checksum: true}},
	{"FSStatRequest zero", abi.FSStatRequest{}},
	{"FSReadRequest", abi.FSReadRequest{Path: "/x", MaxBytes: 1 << 40}},
	{"FSWriteRequest", abi.FSWriteRequest{Path: "/x", Content: []byte("bytes\x00\xff"), Source: "/s", Mode: 0o4755, Owner: "root", Group: "0"}},
	{"FSWriteRequest empty content", abi.FSWriteRequest{Path: "/x", Content: []byte{}}},
	{"FSMkdirRequest", abi.FSMkdirRequest{Path: "/d", Mode: 0o755, Owner: "a", Group: "b", Parents: true}},
	{"FSRemoveRequest", abi.FSRemoveRequest{Path: "/d", Recursive: true}},
	{"FSChownRequest", abi.FSChownRequest{Path: "/d", Owner: "1", Group: "2"}},
	{"FSChmodRequest", abi.FSChmodRequest{Path: "/d", Mode: 0o7777}},
	{"FSListRequest", abi.FSListRequest{Path: "/"}},
	{"ExecRequest zero", abi.ExecRequest{}},
	{"ExecRequest", abi.ExecRequest{Argv: []string{"a", "b c"}, Command: "x", Shell: true, Env: []string{"A=1"}, Cwd: "/", TimeoutMS: 5, Stdin: []byte("in"), MaxOutput: 9, Probe: true}},
	{"UserLookupRequest", abi.UserLookupRequest{Name: "root"}},
	{"GroupLookupRequest", abi.GroupLookupRequest{ID: "0"}},
	{"LookupRequest", abi.LookupRequest{Path: "facts.a"}},
	{"LogRequest", abi.LogRequest{Level: "info", Message: "line\n\t\"quoted\" <html> & \u2028 \x01 \xff end"}},
}

func TestMarshalABI(t *testing.T) {
	for _, tt := range encodeSamples {
		t.Run(tt.name, func(t *testing.T) { sameJSON(t, tt.v) })
	}
}

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type Embedded struct {
	E1 string
	E2 string `json:"e2"`
	A  string // hidden by the outer field of the same name
}

type tagged struct {
	Embedded
	*inner
	A    string `json:"a"`
	Skip string `json:"-"`
	//lint:ignore SA5008 the codec must read odd tags the way encoding/json does
	Dash    string            `json:"-,"`
	Omit    []int             `json:"omit,omitempty"`
	Quoted  int64             `json:"quoted,string"`
	QStr    string            `json:"qstr,string"`
	Ptr     *inner            `json:"ptr"`
	NilPtr  *inner            `json:"nil_ptr"`
	Iface   any               `json:"iface"`
	Time    time.Time         `json:"time"`
	Map     map[int]string    `json:"map"`
	Arr     [2]bool           `json:"arr"`
	Bytes   []byte            `json:"bytes"`
	Named   namedString       `json:"named"`
	Nested  map[string][]uint `json:"nested"`
	private string
	//lint:ignore SA5008 the codec must read odd tags the way encoding/json does
	BadTag string `json:"a\"b"`
}

type namedString string

type cycle struct {
	Next *cycle `json:"next"`
}

func TestMarshalValues(t *testing.T) {
	loop := &cycle{}
	loop.Next = loop
	tests := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"floats", []any{0.0, math.Copysign(0, -1), 1.0, 0.1, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}},
		{"float32", []float32{0.1, 1e-7, 3.4e38}},
		{"ints", []any{int8(-8), int16(16), int32(-32), int64(math.MinInt64), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64), uint(7), uintptr(9)}},
		{"number", json.Number("1.5e3")},
		{"empty number", json.Number("")},
		{"bad number", json.Number("1.")},
		{"raw", json.RawMessage(" { \"a\" : [ 1 , \"x y\" ] } ")},
		{"bad raw", json.RawMessage("{")},
		{"nil raw", json.RawMessage(nil)},
		{"bytes", []byte{0, 1, 2, 255}},
		{"nil bytes", []byte(nil)},
		{"strings", []string{"", "é", "\x00\x1f\x7f", "\xed\xa0\x80", "a\u2029b"}},
		{"nil slice", []string(nil)},
		{"map string", map[string]string{"b": "1", "a": "2"}},
		{"nested any", map[string]any{"z": map[string]any{"y": []any{map[string]any{}}}, "a": nil}},
		{"struct", tagged{Embedded: Embedded{E1: "e1", E2: "e2", A: "hidden"}, inner: &inner{B: 3}, A: "a", Skip: "s", Dash: "d",
			Quoted: 42, QStr: "q\"s", Ptr: &inner{A: "p"}, Iface: []int{1}, Time: time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC),
			Map: map[int]string{2: "b", 10: "a"}, Bytes: []byte("x"), Named: "n", Nested: map[string][]uint{"k": {1, 2}}, private: "p", BadTag: "bt"}},
		{"struct zero", tagged{}},
		{"pointer to struct", &inner{A: "x"}},
		{"time", time.Unix(0, 0).UTC()},
		{"NaN", math.NaN()},
		{"Inf in a map", map[string]any{"x": math.Inf(1)}},
		{"channel", make(chan int)},
		{"func in a struct", struct{ F func() }{}},
		{"cycle", loop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { sameJSON(t, tt.v) })
	}
}

// sameDecode checks wire decodes data into a fresh *T as encoding/json does.
func sameDecode[T any](t *testing.T, data string) {
	t.Helper()
	var got, want T
	gotErr := Unmarshal([]byte(data), &got)
	wantErr := json.Unmarshal([]byte(data), &want)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%T %q: error %v, encoding/json error %v", got, data, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%T %q:\ngot  %#v\nwant %#v", got, data, got, want)
	}
}

func TestUnmarshalABI(t *testing.T) {
	encoded := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Request", func(t *testing.T) {
			sameDecode[abi.Request](t, encoded(abi.Request{Type: "file", Name: "/x", Properties: map[string]any{"a": 1.5, "b": []any{"c", nil, true, map[string]any{}}},
				Provider: "p", Noop: true, HealthCheckOnly: true, Refresh: true, WorkingDir: "/w", Diff: true, HideDiff: true, AfterChanges: true}))
		}},
		{"Request zero", func(t *testing.T) { sameDecode[abi.Request](t, encoded(abi.Request{})) }},
		{"ValidateRequest", func(t *testing.T) {
			sameDecode[abi.ValidateRequest](t, encoded(abi.ValidateRequest{Properties: map[string]any{"n": 1e300}, Provider: "x"}))
		}},
		{"ValidateBatchRequest", func(t *testing.T) {
			sameDecode[abi.ValidateBatchRequest](t, encoded(abi.ValidateBatchRequest{Requests: []abi.ValidateRequest{{}, {Provider: "p"}}}))
		}},
		{"BatchRequest", func(t *testing.T) {
			sameDecode[abi.BatchRequest](t, encoded(abi.BatchRequest{StopOnFailure: true, Requests: []abi.Request{{Name: "a"}}}))
		}},
		{"BatchRequest empty", func(t *testing.T) { sameDecode[abi.BatchRequest](t, `{"requests":[]}`) }},
		{"Response ok", func(t *testing.T) { sameDecode[abi.Response](t, `{"ok": {"exists": true, "n": [1, 2]} }`) }},
		{"Response error", func(t *testing.T) {
			sameDecode[abi.Response](t, encoded(abi.Response{Error: &abi.CallError{Code: "denied", Message: "m"}}))
		}},
		{"Response null", func(t *testing.T) { sameDecode[abi.Response](t, `{"ok":null,"error":null}`) }},
		{"Response repeated error merges", func(t *testing.T) {
			sameDecode[abi.Response](t, `{"error":{"code":"a","message":"m"},"error":{"code":"b"}}`)
		}},
		{"FSStatResponse", func(t *testing.T) {
			sameDecode[abi.FSStatResponse](t, encoded(abi.FSStatResponse{Exists: true, Type: "file", Mode: 0o644, UID: 1, GID: 2, Owner: "o", Group: "g",
				Size: 1 << 40, MTime: -5, SHA256: "ab", LinkTarget: "t"}))
		}},
		{"FSReadResponse", func(t *testing.T) {
			sameDecode[abi.FSReadResponse](t, encoded(abi.FSReadResponse{Content: []byte("\x00\xffdata")}))
		}},
		{"FSReadResponse base64 with newline", func(t *testing.T) { sameDecode[abi.FSReadResponse](t, `{"content":"YW\nJj"}`) }},
		{"FSReadResponse empty", func(t *testing.T) { sameDecode[abi.FSReadResponse](t, `{"content":""}`) }},
		{"FSListResponse", func(t *testing.T) {
			sameDecode[abi.FSListResponse](t, encoded(abi.FSListResponse{Entries: []abi.DirEntry{{Name: "a", Type: "file"}, {Name: "b", Type: "directory"}}}))
		}},
		{"ExecResponse", func(t *testing.T) {
			sameDecode[abi.ExecResponse](t, encoded(abi.ExecResponse{ExitCode: -1, Stdout: "o\n", Stderr: "\ufffd", TimedOut: true, Truncated: true}))
		}},
		{"UserLookupResponse", func(t *testing.T) {
			sameDecode[abi.UserLookupResponse](t, encoded(abi.UserLookupResponse{Name: "root", UID: 0, GID: 0, Home: "/root"}))
		}},
		{"GroupLookupResponse", func(t *testing.T) {
			sameDecode[abi.GroupLookupResponse](t, encoded(abi.GroupLookupResponse{Name: "g", GID: 7}))
		}},
		{"LookupResponse", func(t *testing.T) {
			sameDecode[abi.LookupResponse](t, encoded(abi.LookupResponse{Found: true, Value: map[string]any{"x": []any{1.0}}}))
		}},
		{"Empty", func(t *testing.T) { sameDecode[abi.Empty](t, `{"anything": [1, {"x": null}]}`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestUnmarshalEdges holds the input shapes where a hand-written decoder
// most easily parts from encoding/json.
func TestUnmarshalEdges(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"escapes", `{"name": "a\"b\\c\/d\b\f\n\r\t\u00e9\u0000"}`},
		{"surrogate pair", `{"name": "\ud83d\ude00"}`},
		{"lone high surrogate", `{"name": "\ud83d x"}`},
		{"lone low surrogate", `{"name": "\ude00"}`},
		{"high then non-low escape", `{"name": "\ud83d\u0041"}`},
		{"invalid utf-8", "{\"name\": \"a\xffb\xed\xa0\x80c\"}"},
		{"control character", "{\"name\": \"a\x01\"}"},
		{"unknown fields", `{"zzz": {"a": [1, 2, {"b": null}]}, "name": "x"}`},
		{"null fields", `{"name": null, "noop": null, "properties": null}`},
		{"properties merge", `{"properties": {"a": 1}, "properties": {"b": 2}}`},
		{"duplicate key in properties", `{"properties": {"a": 1, "a": "two"}}`},
		{"wrong type", `{"name": 3}`},
		{"wrong type bool", `{"noop": "true"}`},
		{"properties not an object", `{"properties": []}`},
		{"trailing data", `{"name": "x"} {}`},
		{"trailing blanks", " {\"name\": \"x\"} \n\t\r "},
		{"missing comma", `{"name": "x" "type": "y"}`},
		{"trailing comma", `{"name": "x",}`},
		{"single quotes", `{'name': 'x'}`},
		{"empty input", ``},
		{"null document", `null`},
		{"array document", `[]`},
		{"number document", `12`},
		{"numbers", `{"properties": {"a": -0, "b": 1.5e-3, "c": 1E+2, "d": 123456789012345678901234567890}}`},
		{"bad numbers", `{"properties": {"a": 01}}`},
		{"bad number dot", `{"properties": {"a": 1.}}`},
		{"bad number exponent", `{"properties": {"a": 1e}}`},
		{"number out of range", `{"properties": {"a": 1e400}}`},
		{"literal typo", `{"noop": tru}`},
		{"deep", `{"properties": {"a": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`},
		{"deep but allowed", `{"properties": {"a": ` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { sameDecode[abi.Request](t, tt.data) })
	}
	intCases := []string{`{"uid": 1.0}`, `{"uid": 1e2}`, `{"uid": -0}`, `{"uid": 99999999999999999999}`, `{"mode": -1}`,
		`{"mode": 4294967296}`, `{"mode": 4294967295}`, `{"size": -9223372036854775808}`, `{"uid": "1"}`, `{"uid": null}`, `{"exists": 1}`}
	for _, data := range intCases {
		t.Run("stat "+data, func(t *testing.T) { sameDecode[abi.FSStatResponse](t, data) })
	}
	for _, data := range []string{`{"content": "!!"}`, `{"content": 5}`, `{"content": null}`, `{"content": "YWJj=="}`} {
		t.Run("read "+data, func(t *testing.T) { sameDecode[abi.FSReadResponse](t, data) })
	}
	for _, data := range []string{`{"value": null}`, `{"value": 1}`, `{"value": {"a": [{}]}}`, `{"found": true}`} {
		t.Run("lookup "+data, func(t *testing.T) { sameDecode[abi.LookupResponse](t, data) })
	}
}

func TestUnmarshalUnsupported(t *testing.T) {
	var x struct{}
	if err := Unmarshal([]byte(`{}`), &x); err == nil {
		t.Fatal("decoding into an unsupported type worked")
	}
	if err := Unmarshal([]byte(`{}`), nil); err == nil {
		t.Fatal("decoding into nil worked")
	}
}

func TestUnmarshalResponse(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		ok      any // a pointer to decode "ok" into, or nil
		want    any // what ok points to afterwards
		wantErr *abi.CallError
		bad     string // a decode error containing this
	}{
		{name: "ok into its type", data: `{"ok":{"exists":true,"mode":420,"owner":"root","sha256":"ab"}}`, ok: new(abi.FSStatResponse),
			want: &abi.FSStatResponse{Exists: true, Mode: 420, Owner: "root", SHA256: "ab"}},
		{name: "ok skipped", data: `{"ok":{"exists":true}}`},
		{name: "null ok", data: `{"ok":null}`, ok: new(abi.FSStatResponse), want: &abi.FSStatResponse{}},
		{name: "call error", data: `{"error":{"code":"denied","message":"no"}}`, ok: new(abi.FSStatResponse),
			want: &abi.FSStatResponse{}, wantErr: &abi.CallError{Code: "denied", Message: "no"}},
		{name: "unknown keys skipped", data: `{"x":[1,{"y":2}],"ok":{"found":true,"value":"v"}}`, ok: new(abi.LookupResponse),
			want: &abi.LookupResponse{Found: true, Value: "v"}},
		{name: "wrong type", data: `{"ok":{"exists":"yes"}}`, ok: new(abi.FSStatResponse), bad: `cannot decode string into bool (field "exists")`},
		{name: "truncated", data: `{"ok":{}`, ok: new(abi.Empty), bad: "invalid JSON"},
		{name: "trailing data", data: `{"ok":{}} x`, ok: new(abi.Empty), bad: "data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callErr, err := UnmarshalResponse([]byte(tt.data), tt.ok)
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err = %v, want %q", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(callErr, tt.wantErr) {
				t.Fatalf("call error = %#v, want %#v", callErr, tt.wantErr)
			}
			if tt.ok != nil && !reflect.DeepEqual(tt.ok, tt.want) {
				t.Fatalf("ok = %#v, want %#v", tt.ok, tt.want)
			}
		})
	}
}

// TestEachValidateRequest: the requests EachValidateRequest passes one by
// one are exactly what Unmarshal decodes into a ValidateBatchRequest, and
// its errors are Unmarshal's.
func TestEachValidateRequest(t *testing.T) {
	for _, in := range []string{
		`{"requests":[{"properties":{"name":"/a","mode":"0644","n":1.5,"l":[1,"x"]},"provider":"posix"},{"properties":null},{}]}`,
		`{"other":{"x":[1]},"requests":[{"properties":{"a":{"b":"c"}}}],"more":true}`,
		`{"requests":[]}`, `{"requests":null}`, `{}`, `null`,
		`{"requests":[{"properties":{"a":1}},{"properties":3}]}`,
		`{"requests":[{"properties":{}}]} x`, `{"requests":[`, `[]`,
	} {
		var want abi.ValidateBatchRequest
		wantErr := Unmarshal([]byte(in), &want)
		var got []abi.ValidateRequest
		err := EachValidateRequest([]byte(in), func(r abi.ValidateRequest) { got = append(got, r) })
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: error %v, want %v", in, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want.Requests) && len(got)+len(want.Requests) > 0 {
			t.Errorf("%s:\n got %#v\nwant %#v", in, got, want.Requests)
		}
	}
}
