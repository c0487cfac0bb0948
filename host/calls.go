package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"syscall"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Info describes typ, compiling its plugin and running ccm_describe on first
// use, under caller's limits in an instance of caller's scope. An unknown
// type wraps hostapi.ErrUnknownType.
func (h *Host) Info(ctx context.Context, caller trust.Caller, typ string) (abi.PluginInfo, error) {
	p, err := h.plugin(typ)
	if err != nil {
		return abi.PluginInfo{}, err
	}
	return p.load(ctx, caller)
}

// Preload loads the plugins of types in parallel (compile, instantiate,
// describe) for caller, so a run pays compile time up front and only once
// per type. An id listed n times announces n resources of it in this run:
// with WithColdStart, a built-in not compiled yet that a run announces few
// resources of is interpreted instead (cold.go).
func (h *Host) Preload(ctx context.Context, caller trust.Caller, types []string) error {
	types = slices.Clone(types)
	slices.Sort(types)
	var ids []string
	var counts []int
	for _, typ := range types {
		if len(ids) > 0 && ids[len(ids)-1] == typ {
			counts[len(counts)-1]++
			continue
		}
		ids, counts = append(ids, typ), append(counts, 1)
	}
	errs := make([]error, len(ids))
	interp := make([]bool, len(ids))
	var wg sync.WaitGroup
	for i, typ := range ids {
		wg.Go(func() {
			errs[i] = h.preload(ctx, caller, typ, counts[i])
			interp[i] = errs[i] == nil && h.interpreted(typ)
		})
	}
	wg.Wait()
	var interpreted []string
	for i, typ := range ids {
		if interp[i] {
			interpreted = append(interpreted, typ)
		}
	}
	h.startBackground(interpreted)
	return errors.Join(errs...)
}

// preload announces n resources of typ and loads its plugin.
func (h *Host) preload(ctx context.Context, caller trust.Caller, typ string, n int) error {
	p, err := h.plugin(typ)
	if err != nil {
		return err
	}
	if err := p.announce(ctx, n); err != nil {
		return err
	}
	_, err = p.load(ctx, caller)
	return err
}

// interpreted reports whether typ's plugin is loaded interpreted (cold.go).
func (h *Host) interpreted(typ string) bool {
	p, err := h.plugin(typ)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.interpreted
}

// Validate runs ccm_validate for reqs, in one ccm_validate_batch call when the
// plugin exports it, under caller's limits in an instance of caller's scope.
// Validation may not make host calls (ccm_log aside).
func (h *Host) Validate(ctx context.Context, caller trust.Caller, typ string, reqs []abi.ValidateRequest) ([]abi.ValidateResponse, error) {
	p, err := h.plugin(typ)
	if err != nil {
		return nil, err
	}
	batch, err := p.hasExport(ctx, caller, abi.ExportValidateBatch)
	if err != nil {
		return nil, err
	}
	limits := h.limits.lowered(caller.Limits)
	if batch {
		st := newCallState(abi.ExportValidateBatch, typ, caller, limits)
		var resp abi.ValidateBatchResponse
		if err := h.exchange(ctx, p, st, abi.ValidateBatchRequest{Requests: reqs}, &resp); err != nil {
			return nil, err
		}
		if len(resp.Results) != len(reqs) {
			return nil, fmt.Errorf("plugin for type %q: %s returned %d results for %d requests", typ, abi.ExportValidateBatch, len(resp.Results), len(reqs))
		}
		p.handOut(st, resp.Results)
		return resp.Results, nil
	}
	out := make([]abi.ValidateResponse, 0, len(reqs))
	for _, req := range reqs {
		st := newCallState(abi.ExportValidate, typ, caller, limits)
		var resp abi.ValidateResponse
		if err := h.exchange(ctx, p, st, req, &resp); err != nil {
			return nil, err
		}
		one := []abi.ValidateResponse{resp}
		p.handOut(st, one)
		out = append(out, one[0])
	}
	return out, nil
}

// Status runs ccm_status. The host refuses the plugin's mutating calls
// whatever caller.Mode says: status is read-only.
func (h *Host) Status(ctx context.Context, caller trust.Caller, req abi.Request) (abi.StatusResponse, error) {
	if !caller.Mode.ReadOnly() {
		caller.Mode = trust.ModeStatus
	}
	var resp abi.StatusResponse
	err := h.resourceCall(ctx, caller, abi.ExportStatus, req, &resp)
	return resp, err
}

// Apply runs ccm_apply. caller.Mode is the one carrier of the run's mode:
// the host sets the request's Noop and HealthCheckOnly from it
// (trust.Mode.Request), so plugin and host agree on what may happen. The
// engine sets no flag in the request; one that does (another hostapi
// caller) can only narrow the mode, never widen it (effectiveMode).
func (h *Host) Apply(ctx context.Context, caller trust.Caller, req abi.Request) (abi.Result, error) {
	caller.Mode = effectiveMode(caller, req)
	req = caller.Mode.Request(req)
	var res abi.Result
	err := h.resourceCall(ctx, caller, abi.ExportApply, req, &res)
	return res, err
}

// effectiveMode is the mode a ccm_apply of req runs in: caller.Mode, made
// read-only when an apply-mode caller's request asks for noop or health
// checks only.
func effectiveMode(caller trust.Caller, req abi.Request) trust.Mode {
	switch {
	case caller.Mode != trust.ModeApply:
		return caller.Mode
	case req.HealthCheckOnly:
		return trust.ModeHealthCheck
	case req.Noop:
		return trust.ModeNoop
	}
	return caller.Mode
}

// Exec runs a command for the engine itself (health checks) through the same
// check as a plugin's ccm_exec, with only the caller's grants applying: no
// plugin stands behind it, and the command was written in the manifest.
func (h *Host) Exec(ctx context.Context, caller trust.Caller, req abi.ExecRequest) (abi.ExecResponse, error) {
	st := newCallState("exec", "", caller, h.limits.lowered(caller.Limits))
	st.HostCalls, st.Names = true, &h.names
	resp, cerr := hostcall.Exec(ctx, &st.State, req)
	if cerr != nil {
		return resp, fmt.Errorf("%s: %s: %w", st.resource(), abi.CallExec, cerr)
	}
	return resp, nil
}

// ReadFile implements hostapi.Plugins.ReadFile: hostcall.FSRead with no plugin
// capabilities in the way, only the caller's grant chain.
func (h *Host) ReadFile(ctx context.Context, caller trust.Caller, path string) ([]byte, error) {
	st := newCallState("read", "", caller, h.limits.lowered(caller.Limits))
	st.HostCalls, st.Names = true, &h.names
	resp, cerr := hostcall.FSRead(ctx, &st.State, abi.FSReadRequest{Path: path})
	if cerr != nil && cerr.Code == abi.CodeNotFound {
		// The same words (and errors.Is) as os.ReadFile for the common case.
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	if cerr != nil {
		return nil, cerr
	}
	return resp.(abi.FSReadResponse).Content, nil
}

// resourceCall runs ccm_status or ccm_apply for caller.
func (h *Host) resourceCall(ctx context.Context, caller trust.Caller, export string, req abi.Request, out any) error {
	p, err := h.plugin(pluginID(caller, req.Type))
	if err != nil {
		return err
	}
	info, err := p.load(ctx, caller)
	if err != nil {
		return err
	}
	caps := info.Capabilities
	st := newCallState(export, req.Type, caller, h.limits.lowered(caller.Limits))
	st.Caps, st.Properties, st.Guards, st.HostCalls, st.Names = &caps, req.Properties, info.Guards, true, &h.names
	st.Builtin = p.origin == builtinOrigin && !p.registered
	if export == abi.ExportApply {
		release, err := h.lockIfNeeded(ctx, info, caller)
		if err != nil {
			return err
		}
		defer release()
	}
	return h.exchange(ctx, p, st, req, out)
}

// exchange encodes in, calls st.Export, and decodes the output into out.
func (h *Host) exchange(ctx context.Context, p *plugin, st *callState, in, out any) error {
	st.encode = func(serial uint64) ([]byte, int, error) {
		v, sent := forInstance(in, serial)
		data, err := encodeInput(v)
		return data, sent, err
	}
	raw, err := p.call(ctx, st, st.Export, nil)
	if err != nil {
		return err
	}
	if err := decodeOutput(raw, out); err != nil {
		return fmt.Errorf("plugin for type %q: decode %s output: %w", p.typ, st.Export, err)
	}
	return nil
}

// pluginID is the plugin serving a resource call: the caller's Plugin (a
// registered file's id) or else the resource type (a root-scope plugin).
func pluginID(caller trust.Caller, typ string) string {
	if caller.Plugin != "" {
		return caller.Plugin
	}
	return typ
}
