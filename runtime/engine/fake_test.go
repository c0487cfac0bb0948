package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// fakePlugins is an in-memory hostapi.Plugins for engine tests: one type
// "mark" whose apply records the call and answers from the properties:
// {changed: bool, fail: "msg"}. It is deliberately dumb: the real plugins
// are tested end to end through WASM in cmd/ccm.
type fakePlugins struct {
	mu      sync.Mutex
	calls   []fakeCall
	execs   []abi.ExecRequest
	batches []int // sizes of ApplyBatch calls
	exit    int   // exit code of Exec
	// registered are the plugins Register loaded, by id. A fake plugin
	// file holds its PluginInfo as JSON; it then behaves like mark.
	registered map[string]abi.PluginInfo
	// validated are the properties each handle Validate returned was given
	// (as a host's token stands for them); Apply checks a request's handle
	// against them and forgets it, noting misuse in handleErrs.
	validated  map[int64]map[string]any
	lastHandle int64
	handleErrs []string
	forgot     int // ForgetHandles calls
}

// ForgetHandles counts the calls (hostapi.HandleForgetter).
func (f *fakePlugins) ForgetHandles(context.Context) {
	f.mu.Lock()
	f.forgot++
	f.mu.Unlock()
}

type fakeCall struct {
	caller trust.Caller
	req    abi.Request
}

var _ hostapi.Plugins = (*fakePlugins)(nil)

var markInfo = abi.PluginInfo{
	ABI: 1, Type: "mark", Version: "1", Providers: []string{"fake"},
	Ensure: []string{"present"}, DefaultEnsure: "present", Refresh: true,
	Deferred: []string{"later"}, Batch: true,
}

func (f *fakePlugins) Info(_ context.Context, _ trust.Caller, typ string) (abi.PluginInfo, error) {
	f.mu.Lock()
	info, ok := f.registered[typ]
	f.mu.Unlock()
	if ok {
		return info, nil
	}
	if typ != "mark" {
		return abi.PluginInfo{}, fmt.Errorf("%w %q", hostapi.ErrUnknownType, typ)
	}
	return markInfo, nil
}

func (f *fakePlugins) Preload(context.Context, trust.Caller, []string) error { return nil }

// RegisterBundled reads a bundle's fake plugin file without the caller's
// grant, as the host does.
func (f *fakePlugins) RegisterBundled(ctx context.Context, caller trust.Caller, file, _, want string) (string, abi.PluginInfo, error) {
	caller.Grants = nil
	return f.Register(ctx, caller, file, want)
}

// Register reads a fake plugin file (its PluginInfo as JSON) through the
// caller's fs_read grant, checks the pin like the host, and refuses the
// built-in type mark.
func (f *fakePlugins) Register(_ context.Context, caller trust.Caller, file, want string) (string, abi.PluginInfo, error) {
	if !caller.Grants.Allows(trust.FSRead, file) {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: denied: fs_read not granted", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %w", err)
	}
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	if want != "" && want != got {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: sha256 mismatch: pinned %s, the file has %s", file, want, got)
	}
	var info abi.PluginInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: %w", file, err)
	}
	if info.Type == "mark" {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: provides type %q, which is built in: %w", file, info.Type, hostapi.ErrTypeTaken)
	}
	id := info.Type + "@" + got[:12]
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.registered == nil {
		f.registered = map[string]abi.PluginInfo{}
	}
	f.registered[id] = info
	return id, info, nil
}

func (f *fakePlugins) Validate(_ context.Context, _ trust.Caller, _ string, reqs []abi.ValidateRequest) ([]abi.ValidateResponse, error) {
	out := make([]abi.ValidateResponse, len(reqs))
	for i, r := range reqs {
		for k := range r.Properties {
			if !slices.Contains([]string{"name", "ensure", "changed", "fail", "later", "value"}, k) {
				out[i].Errors = append(out[i].Errors, "unknown property "+k)
			}
		}
		if len(out[i].Errors) == 0 {
			f.mu.Lock()
			f.lastHandle++
			if f.validated == nil {
				f.validated = map[int64]map[string]any{}
			}
			f.validated[f.lastHandle] = maps.Clone(r.Properties)
			out[i].Handle = f.lastHandle
			f.mu.Unlock()
		}
	}
	return out, nil
}

func (f *fakePlugins) Status(context.Context, trust.Caller, abi.Request) (abi.StatusResponse, error) {
	return abi.StatusResponse{}, nil
}

func (f *fakePlugins) Apply(_ context.Context, c trust.Caller, req abi.Request) (abi.Result, error) {
	req = c.Mode.Request(req) // as the host does: the mode travels in the caller
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{c, req})
	if req.Handle != 0 {
		want, ok := f.validated[req.Handle]
		switch {
		case !ok:
			f.handleErrs = append(f.handleErrs, fmt.Sprintf("%s: handle %d unknown or used twice", req.Name, req.Handle))
		case !reflect.DeepEqual(want, req.Properties):
			f.handleErrs = append(f.handleErrs, fmt.Sprintf("%s: handle %d validated %v, applied with %v", req.Name, req.Handle, want, req.Properties))
		}
		delete(f.validated, req.Handle)
	}
	f.mu.Unlock()
	res := abi.Result{FinalEnsure: "present"}
	if req.Properties["changed"] == true || req.Refresh {
		res.Changed = true
		res.Refreshed = req.Refresh
		if req.Noop {
			res.NoopMessage = "Would have marked"
		}
	}
	if msg, _ := req.Properties["fail"].(string); msg != "" {
		res.Error = msg
	}
	return res, nil
}

func (f *fakePlugins) ApplyBatch(ctx context.Context, callers []trust.Caller, reqs []abi.Request, stop bool) ([]abi.Result, error) {
	f.mu.Lock()
	f.batches = append(f.batches, len(reqs))
	f.mu.Unlock()
	var out []abi.Result
	for i, req := range reqs {
		res, err := f.Apply(ctx, callers[i], req)
		if err != nil {
			return out, err
		}
		out = append(out, res)
		if stop && res.Error != "" {
			break
		}
	}
	return out, nil
}

func (f *fakePlugins) Exec(_ context.Context, _ trust.Caller, req abi.ExecRequest) (abi.ExecResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs = append(f.execs, req)
	return abi.ExecResponse{ExitCode: f.exit}, nil
}

func (f *fakePlugins) Close(context.Context) error { return nil }

// names returns the names of applied resources, in call order.
func (f *fakePlugins) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.req.Name)
	}
	return out
}

func (f *fakePlugins) call(name string) (fakeCall, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.req.Name == name {
			return c, true
		}
	}
	return fakeCall{}, false
}

// ReadFile checks the grant chain on the fully resolved path, as the host
// does, and records the refusals.
func (f *fakePlugins) ReadFile(_ context.Context, caller trust.Caller, path string) ([]byte, error) {
	full, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !caller.Grants.Allows(trust.FSRead, full) {
		return nil, fmt.Errorf("denied: fs_read not granted for %s", full)
	}
	return os.ReadFile(full)
}
