package sdk

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// flatPreparer is preparer reading a batch's properties flat; it counts
// which of its two validations ran.
type flatPreparer struct {
	preparer
	flat int
}

func (p *flatPreparer) PrepareFlat(props *flat.Props, _ string) (any, []string) {
	p.flat++
	v, _ := props.Get("value")
	if v.Str() == "" {
		return nil, []string{"value is required"}
	}
	name, _ := props.Get("name")
	return parsed{name: name.Str(), value: v.Str()}, nil
}

// TestFlatPreparer: a batch's validation goes to PrepareFlat, with the
// same handles and errors as Prepare gives; a single validation still goes
// to Prepare; what was kept applies by handle.
func TestFlatPreparer(t *testing.T) {
	kept = keeper{}
	defer func() { kept = keeper{} }()
	p := &flatPreparer{}
	if info := serveJSON[abi.PluginInfo](t, p, abi.ExportDescribe, nil); !info.Handles {
		t.Fatal("describe of a FlatPreparer does not set handles")
	}
	vr := serveJSON[abi.ValidateBatchResponse](t, p, abi.ExportValidateBatch, abi.ValidateBatchRequest{Requests: []abi.ValidateRequest{
		{Properties: map[string]any{"name": "a", "value": "1"}},
		{Properties: map[string]any{"name": "bad"}},
		{Properties: map[string]any{"name": "c", "value": "3"}},
	}})
	if p.flat != 3 || p.prepared != 0 || len(vr.Results) != 3 {
		t.Fatalf("PrepareFlat %d, Prepare %d times, results %+v", p.flat, p.prepared, vr.Results)
	}
	a, bad, c := vr.Results[0], vr.Results[1], vr.Results[2]
	if a.Handle == 0 || c.Handle == 0 || a.Handle == c.Handle || a.Errors == nil || len(a.Errors) != 0 {
		t.Fatalf("valid results = %+v, %+v; want distinct handles and errors []", a, c)
	}
	if bad.Handle != 0 || len(bad.Errors) != 1 || bad.Errors[0] != "value is required" {
		t.Fatalf("invalid result = %+v; want its error and no handle", bad)
	}
	one := serveJSON[abi.ValidateResponse](t, p, abi.ExportValidate, abi.ValidateRequest{Properties: map[string]any{"name": "d", "value": "4"}})
	if one.Handle == 0 || p.prepared != 1 {
		t.Fatalf("ccm_validate = %+v, Prepare %d times; want a handle from Prepare", one, p.prepared)
	}
	// The flat path weighs what it keeps as the map path does.
	if want := 2 * (keptOverhead + approxSize(map[string]any{"name": "a", "value": "1"})); kept.bytes-kept.values[one.Handle].size != want {
		t.Fatalf("kept %d bytes for the batch, want %d", kept.bytes-kept.values[one.Handle].size, want)
	}
	res := serveJSON[abi.BatchResponse](t, p, abi.ExportApplyBatch, abi.BatchRequest{Requests: []abi.Request{
		{Name: "a", Handle: a.Handle}, {Name: "c", Handle: c.Handle}, {Name: "d", Handle: one.Handle},
	}})
	for i, want := range []string{"kept a=1", "kept c=3", "kept d=4"} {
		if r := res.Results[i]; r.Error != "" || len(r.Messages) != 1 || r.Messages[0] != want {
			t.Errorf("result %d = %+v, want %s", i, r, want)
		}
	}
	if _, err := serve(abi.ExportValidateBatch, p, nil, []byte(`{"requests":[{"properties":"x"}]}`)); err == nil {
		t.Fatal("a malformed batch was accepted")
	}
}

// BenchmarkServeValidateBatchFlat is the SDK's share of a batch of 256
// stable files' validation for a FlatPreparer, natively: decoding, the
// handles kept, the answer.
func BenchmarkServeValidateBatchFlat(b *testing.B) {
	const n = 256
	reqs := make([]abi.ValidateRequest, n)
	for i := range n {
		reqs[i] = abi.ValidateRequest{Properties: map[string]any{
			"name": "/srv/files/f" + strconv.Itoa(i) + ".txt", "ensure": "present", "content": "file " + strconv.Itoa(i),
			"owner": "root", "group": "root", "mode": "0644", "value": "v",
		}}
	}
	in, err := json.Marshal(abi.ValidateBatchRequest{Requests: reqs})
	if err != nil {
		b.Fatal(err)
	}
	p := &flatPreparer{}
	defer func() { kept = keeper{} }()
	for b.Loop() {
		kept = keeper{}
		if _, err := serve(abi.ExportValidateBatch, p, nil, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/resource")
}
