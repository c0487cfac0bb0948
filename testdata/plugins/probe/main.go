// Command probe is the host's test plugin. Its ccm_apply and ccm_status make
// the host calls listed in the request's "calls" property, through the SDK's
// typed Host, and return every answer in State["results"]; other properties
// make it misbehave on purpose (spin, alloc, panic) so the host's limits and
// recovery can be tested end to end, or probe its sandbox (guest_read tries
// plain WASI file access, extism_log logs through the Extism kernel); stat
// makes one typed ccm_fs_stat, as a real plugin would, and write one large
// ccm_fs_write, for benchmarks.
//
// Rebuild probe.wasm with: go generate ./testdata/plugins/...
package main

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o probe.wasm .

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func init() { sdk.Register(probe{}) }

// main is never called in a c-shared wasm module; it exists so the package
// also builds natively.
func main() {}

type probe struct{}

// call is one entry of the "calls" property.
type call struct {
	Call    string          `json:"call"`
	Request json.RawMessage `json:"request"`
}

func (probe) Info() abi.PluginInfo {
	return abi.PluginInfo{
		Type:          "probe",
		Version:       "1.0.0",
		Providers:     []string{"test"},
		Ensure:        []string{"present", "absent"},
		DefaultEnsure: "present",
		Guards:        []string{"onlyif", "unless", "command"},
		Capabilities: abi.Capabilities{
			FSRead:    []string{"/**"},
			FSWrite:   []string{"/**"},
			Exec:      []string{"/**"},
			Users:     true,
			ProbeExec: []string{"/usr/bin/id -u"},
		},
	}
}

func (probe) Validate(req abi.ValidateRequest) []string {
	if msg, ok := req.Properties["panic"].(string); ok {
		panic(msg)
	}
	if bad, ok := req.Properties["invalid"].(string); ok {
		return []string{bad}
	}
	return nil
}

func (probe) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	results, err := runCalls(h, req.Properties)
	return abi.StatusResponse{State: map[string]any{"results": results}, Error: err}
}

func (probe) Apply(h sdk.Host, req abi.Request) abi.Result {
	p := req.Properties
	if msg, ok := p["panic"].(string); ok {
		panic(msg)
	}
	if spin, _ := p["spin"].(bool); spin {
		n := 0
		for {
			n++
		}
	}
	if size, ok := p["alloc"].(float64); ok {
		b := make([]byte, int(size))
		for i := range b {
			b[i] = byte(i)
		}
		return abi.Result{State: map[string]any{"allocated": len(b)}}
	}
	if path, ok := p["guest_read"].(string); ok {
		_, err := os.ReadFile(path)
		return abi.Result{State: map[string]any{"guest_read_error": fmt.Sprint(err)}}
	}
	if path, ok := p["write"].(string); ok {
		// One large typed write built in the guest: the cost of moving bytes
		// through the SDK and the kernel, for the host's benchmarks.
		size, _ := p["size"].(float64)
		err := h.WriteFile(abi.FSWriteRequest{Path: path, Content: make([]byte, int(size)), Mode: 0o644})
		if err != nil {
			return abi.Result{Error: err.Error()}
		}
		return abi.Result{Changed: true}
	}
	if path, ok := p["stat"].(string); ok {
		// One typed host call and a small result: what a real plugin does,
		// for the host's benchmarks.
		st, err := h.Stat(abi.FSStatRequest{Path: path, Checksum: true})
		if err != nil {
			return abi.Result{Error: err.Error()}
		}
		return abi.Result{State: map[string]any{"exists": st.Exists, "sha256": st.SHA256}}
	}
	if msg, ok := p["extism_log"].(string); ok {
		extismLog(msg)
	}
	results, err := runCalls(h, p)
	return abi.Result{
		Changed: true,
		State:   map[string]any{"results": results, "noop": req.Noop, "health_check_only": req.HealthCheckOnly},
		Error:   err,
	}
}

// runCalls makes each listed host call and records {"ok": response} or
// {"error": {"code", "message"}} for it.
func runCalls(h sdk.Host, props map[string]any) ([]any, string) {
	raw, err := json.Marshal(props["calls"])
	if err != nil {
		return nil, "encode calls: " + err.Error()
	}
	var calls []call
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, "decode calls: " + err.Error()
	}
	results := make([]any, 0, len(calls))
	for i, c := range calls {
		resp, err := do(h, c)
		switch e := err.(type) {
		case nil:
			results = append(results, map[string]any{"ok": resp})
		case *abi.CallError:
			results = append(results, map[string]any{"error": e})
		default:
			return results, fmt.Sprintf("calls[%d] %s: %v", i, c.Call, err)
		}
	}
	return results, ""
}

func do(h sdk.Host, c call) (any, error) {
	switch c.Call {
	case abi.CallFSStat:
		var r abi.FSStatRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return h.Stat(r)
	case abi.CallFSRead:
		var r abi.FSReadRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		b, err := h.ReadFile(r)
		return abi.FSReadResponse{Content: b}, err
	case abi.CallFSWrite:
		var r abi.FSWriteRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return abi.Empty{}, h.WriteFile(r)
	case abi.CallFSMkdir:
		var r abi.FSMkdirRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return abi.Empty{}, h.Mkdir(r)
	case abi.CallFSRemove:
		var r abi.FSRemoveRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return abi.Empty{}, h.Remove(r)
	case abi.CallFSChown:
		var r abi.FSChownRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return abi.Empty{}, h.Chown(r)
	case abi.CallFSChmod:
		var r abi.FSChmodRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return abi.Empty{}, h.Chmod(r)
	case abi.CallFSList:
		var r abi.FSListRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		entries, err := h.List(r)
		return abi.FSListResponse{Entries: entries}, err
	case abi.CallExec:
		var r abi.ExecRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return h.Exec(r)
	case abi.CallUserLookup:
		var r abi.UserLookupRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return h.LookupUser(r)
	case abi.CallGroupLookup:
		var r abi.GroupLookupRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		return h.LookupGroup(r)
	case abi.CallLookup:
		var r abi.LookupRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		v, found, err := h.Lookup(r.Path)
		return abi.LookupResponse{Found: found, Value: v}, err
	case abi.CallLog:
		var r abi.LogRequest
		if err := json.Unmarshal(c.Request, &r); err != nil {
			return nil, err
		}
		h.Log(r.Level, r.Message)
		return abi.Empty{}, nil
	}
	return nil, fmt.Errorf("unknown host call %q", c.Call)
}
