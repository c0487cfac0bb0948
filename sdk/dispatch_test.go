package sdk

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// fakeResource records what it was given and can fail on demand.
type fakeResource struct {
	info     abi.PluginInfo
	validate func(abi.ValidateRequest) []string
	apply    func(Host, abi.Request) abi.Result
	status   func(Host, abi.Request) abi.StatusResponse
}

func (f fakeResource) Info() abi.PluginInfo { return f.info }

func (f fakeResource) Validate(req abi.ValidateRequest) []string {
	if f.validate == nil {
		return nil
	}
	return f.validate(req)
}

func (f fakeResource) Status(h Host, req abi.Request) abi.StatusResponse { return f.status(h, req) }

func (f fakeResource) Apply(h Host, req abi.Request) abi.Result { return f.apply(h, req) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestServe(t *testing.T) {
	r := fakeResource{
		info: abi.PluginInfo{Type: "demo", Version: "1.0.0"},
		validate: func(req abi.ValidateRequest) []string {
			if req.Properties["bad"] != nil {
				return []string{"bad is bad"}
			}
			return nil
		},
		status: func(_ Host, req abi.Request) abi.StatusResponse {
			return abi.StatusResponse{State: map[string]any{"name": req.Name}}
		},
		apply: func(_ Host, req abi.Request) abi.Result {
			switch req.Name {
			case "fail":
				return abi.Result{Error: "failed"}
			case "panic":
				panic("apply boom")
			}
			return abi.Result{Changed: true, NoopMessage: req.Name}
		},
	}
	tests := []struct {
		name   string
		r      Resource
		export string
		input  any
		want   string // JSON output, or the error text when err is set
		err    bool
	}{
		{name: "describe fills abi", r: r, export: abi.ExportDescribe,
			want: `{"abi":1,"type":"demo","version":"1.0.0","providers":null,"ensure":null,"refresh":false,"capabilities":{}}`},
		{name: "validate ok gives []", r: r, export: abi.ExportValidate, input: abi.ValidateRequest{Properties: map[string]any{}},
			want: `{"errors":[]}`},
		{name: "validate errors", r: r, export: abi.ExportValidate, input: abi.ValidateRequest{Properties: map[string]any{"bad": 1}},
			want: `{"errors":["bad is bad"]}`},
		{name: "validate batch", r: r, export: abi.ExportValidateBatch,
			input: abi.ValidateBatchRequest{Requests: []abi.ValidateRequest{{}, {Properties: map[string]any{"bad": true}}}},
			want:  `{"results":[{"errors":[]},{"errors":["bad is bad"]}]}`},
		{name: "status", r: r, export: abi.ExportStatus, input: abi.Request{Name: "x"}, want: `{"state":{"name":"x"}}`},
		{name: "apply", r: r, export: abi.ExportApply, input: abi.Request{Name: "x"}, want: `{"changed":true,"noop_message":"x"}`},
		{name: "apply panic is an error", r: r, export: abi.ExportApply, input: abi.Request{Name: "panic"},
			want: "plugin panicked in ccm_apply: apply boom", err: true},
		{name: "batch stops at the first failure", r: r, export: abi.ExportApplyBatch,
			input: abi.BatchRequest{StopOnFailure: true, Requests: []abi.Request{{Name: "a"}, {Name: "fail"}, {Name: "c"}}},
			want:  `{"results":[{"changed":true,"noop_message":"a"},{"changed":false,"error":"failed"}]}`},
		{name: "batch goes on without stop_on_failure", r: r, export: abi.ExportApplyBatch,
			input: abi.BatchRequest{Requests: []abi.Request{{Name: "fail"}, {Name: "c"}}},
			want:  `{"results":[{"changed":false,"error":"failed"},{"changed":true,"noop_message":"c"}]}`},
		{name: "batch panic fails that request only", r: r, export: abi.ExportApplyBatch,
			input: abi.BatchRequest{Requests: []abi.Request{{Name: "panic"}, {Name: "c"}}},
			want:  `{"results":[{"changed":false,"error":"plugin panicked in ccm_apply_batch: apply boom"},{"changed":true,"noop_message":"c"}]}`},
		{name: "bad input", r: r, export: abi.ExportApply, input: json.RawMessage(`{"name": 3}`), want: "decode ccm_apply input", err: true},
		{name: "unknown export", r: r, export: "ccm_nope", want: `unknown export "ccm_nope"`, err: true},
		{name: "not registered", r: nil, export: abi.ExportDescribe, want: "no resource registered", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var input []byte
			if tt.input != nil {
				input = mustJSON(t, tt.input)
			}
			out, err := serve(tt.export, tt.r, nil, input)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.export == abi.ExportApplyBatch {
				out = withoutDurations(t, out)
			}
			if string(out) != tt.want {
				t.Fatalf("got  %s\nwant %s", out, tt.want)
			}
		})
	}
}

// durationNS matches the duration_ns key the SDK adds to each batch result.
var durationNS = regexp.MustCompile(`,"duration_ns":[0-9]+`)

// withoutDurations checks every result of a batch output carries its own
// positive duration_ns, and removes them (their values vary).
func withoutDurations(t *testing.T, out []byte) []byte {
	t.Helper()
	var resp abi.BatchResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		if r.DurationNS <= 0 {
			t.Fatalf("result %d has duration_ns %d, want > 0: %s", i, r.DurationNS, out)
		}
	}
	return durationNS.ReplaceAll(out, nil)
}

func TestRegister(t *testing.T) {
	defer func() { registry.r = nil }()
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("nil", func() { Register(nil) })
	Register(fakeResource{})
	if registered() == nil {
		t.Fatal("not registered")
	}
	mustPanic("second", func() { Register(fakeResource{}) })
}

// TestBatchDurations checks the SDK times each resource of a batch, and
// keeps a duration the Resource measured itself.
func TestBatchDurations(t *testing.T) {
	r := fakeResource{apply: func(_ Host, req abi.Request) abi.Result {
		if req.Name == "timed" {
			return abi.Result{DurationNS: 5}
		}
		return abi.Result{}
	}}
	out, err := serve(abi.ExportApplyBatch, r, nil, mustJSON(t, abi.BatchRequest{Requests: []abi.Request{{Name: "a"}, {Name: "timed"}}}))
	if err != nil {
		t.Fatal(err)
	}
	var resp abi.BatchResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 2 || resp.Results[0].DurationNS <= 0 || resp.Results[1].DurationNS != 5 {
		t.Fatalf("results = %+v, want a measured duration and the resource's own 5", resp.Results)
	}
}
