package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// preparer parses "value" at validation and applies what it kept; its Apply
// parses again and says so, so a test sees which path ran.
type preparer struct {
	fakeResource
	prepared int
}

type parsed struct{ name, value string }

func (p *preparer) Prepare(req abi.ValidateRequest) (any, []string) {
	p.prepared++
	v, _ := req.Properties["value"].(string)
	if v == "" {
		return nil, []string{"value is required"}
	}
	name, _ := req.Properties["name"].(string)
	return parsed{name: name, value: v}, nil
}

func (p *preparer) Apply(_ Host, req abi.Request) abi.Result {
	v, _ := req.Properties["value"].(string)
	return abi.Result{Messages: []string{"parsed " + req.Name + "=" + v}}
}

func (p *preparer) ApplyPrepared(_ Host, req abi.Request, v any) abi.Result {
	k := v.(parsed)
	if req.Properties != nil {
		return abi.Result{Error: "properties sent with a handle"}
	}
	return abi.Result{Messages: []string{"kept " + k.name + "=" + k.value}}
}

func serveJSON[T any](t *testing.T, r Resource, export string, in any) T {
	t.Helper()
	out, err := serve(export, r, nil, mustJSON(t, in))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPreparerHandles(t *testing.T) {
	kept = keeper{}
	defer func() { kept = keeper{} }()
	p := &preparer{}

	info := serveJSON[abi.PluginInfo](t, p, abi.ExportDescribe, nil)
	if !info.Handles {
		t.Fatal("describe of a Preparer does not set handles")
	}
	plain := fakeResource{info: abi.PluginInfo{Handles: true}}
	if info := serveJSON[abi.PluginInfo](t, plain, abi.ExportDescribe, nil); info.Handles {
		t.Fatal("describe of a plain Resource sets handles (the SDK keeps nothing for it)")
	}

	vr := serveJSON[abi.ValidateBatchResponse](t, p, abi.ExportValidateBatch, abi.ValidateBatchRequest{Requests: []abi.ValidateRequest{
		{Properties: map[string]any{"name": "a", "value": "1"}},
		{Properties: map[string]any{"name": "bad"}},
		{Properties: map[string]any{"name": "c", "value": "3"}},
	}})
	if p.prepared != 3 || len(vr.Results) != 3 {
		t.Fatalf("prepared %d, results %+v", p.prepared, vr.Results)
	}
	a, bad, c := vr.Results[0], vr.Results[1], vr.Results[2]
	if a.Handle == 0 || c.Handle == 0 || a.Handle == c.Handle || len(a.Errors) != 0 {
		t.Fatalf("valid results = %+v, %+v; want distinct handles", a, c)
	}
	if bad.Handle != 0 || len(bad.Errors) != 1 {
		t.Fatalf("invalid result = %+v; want its error and no handle", bad)
	}
	one := serveJSON[abi.ValidateResponse](t, p, abi.ExportValidate, abi.ValidateRequest{Properties: map[string]any{"name": "d", "value": "4"}})
	if one.Handle == 0 || one.Errors == nil {
		t.Fatalf("ccm_validate = %+v; want a handle and errors []", one)
	}

	res := serveJSON[abi.BatchResponse](t, p, abi.ExportApplyBatch, abi.BatchRequest{Requests: []abi.Request{
		{Name: "a", Handle: a.Handle},
		{Name: "b", Properties: map[string]any{"value": "2"}},
		{Name: "c", Handle: c.Handle},
	}})
	want := []string{"kept a=1", "parsed b=2", "kept c=3"}
	for i, r := range res.Results {
		if r.Error != "" || len(r.Messages) != 1 || r.Messages[0] != want[i] {
			t.Errorf("result %d = %+v, want %s", i, r, want[i])
		}
	}
	if r := serveJSON[abi.Result](t, p, abi.ExportApply, abi.Request{Name: "d", Handle: one.Handle}); r.Error != "" || r.Messages[0] != "kept d=4" {
		t.Errorf("ccm_apply by handle = %+v", r)
	}
	if len(kept.values) != 0 || kept.bytes != 0 {
		t.Errorf("after applying every handle, %d values (%d bytes) are still kept", len(kept.values), kept.bytes)
	}

	// A handle is good once; an unknown one fails the resource, clearly.
	for _, h := range []int64{a.Handle, 999} {
		r := serveJSON[abi.Result](t, p, abi.ExportApply, abi.Request{Name: "a", Handle: h})
		if !strings.Contains(r.Error, "unknown validated-resource handle") || !strings.Contains(r.Error, "bug in the host") {
			t.Errorf("apply with handle %d = %+v; want an unknown-handle error", h, r)
		}
	}
	// A plain Resource given a handle fails rather than apply nil properties.
	plain.apply = func(Host, abi.Request) abi.Result { return abi.Result{Changed: true} }
	if r := serveJSON[abi.Result](t, plain, abi.ExportApply, abi.Request{Name: "x", Handle: 1}); !strings.Contains(r.Error, "keeps no validated resources") {
		t.Errorf("plain Resource with a handle = %+v", r)
	}
	// Its validation keeps nothing and answers no handle.
	if r := serveJSON[abi.ValidateResponse](t, plain, abi.ExportValidate, abi.ValidateRequest{}); r.Handle != 0 {
		t.Errorf("plain Resource validation = %+v", r)
	}
}

// TestKeeperBounds: past the count or byte bound a valid resource gets no
// handle (the host then sends its properties), and applying frees room.
func TestKeeperBounds(t *testing.T) {
	var k keeper
	big := map[string]any{"content": strings.Repeat("x", maxKeptBytes/2)}
	h1 := k.keep(1, big)
	if h1 == 0 {
		t.Fatal("first value not kept")
	}
	if h := k.keep(2, big); h != 0 {
		t.Fatalf("kept past %d bytes: handle %d", maxKeptBytes, h)
	}
	if v, ok := k.take(h1); !ok || v != 1 {
		t.Fatalf("take = %v, %v", v, ok)
	}
	if h := k.keep(3, big); h == 0 {
		t.Fatal("no room after the first value was applied")
	}
	var n keeper
	for range maxKept {
		if n.keep(0, nil) == 0 {
			t.Fatal("refused below the count bound")
		}
	}
	if h := n.keep(0, nil); h != 0 {
		t.Fatalf("kept past %d values: handle %d", maxKept, h)
	}
	if approxSize(map[string]any{"a": []any{"bc", 1.0}}) != 16+1+16+2+16+8 {
		t.Fatalf("approxSize = %d", approxSize(map[string]any{"a": []any{"bc", 1.0}}))
	}
}
