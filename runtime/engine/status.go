package engine

import (
	"context"
	"fmt"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// StatusRequest names one resource whose current state ccm status shows.
type StatusRequest struct {
	Type string
	Name string
	Dir  string // working directory (abi.Request.WorkingDir)
}

// Status runs the plugin's ccm_status for one resource, in the root scope
// (Options.Grants) and read-only (trust.ModeStatus): the host refuses every
// write and runs only the plugin's probes. The plugin's log lines go to the
// Reporter's Log. An unknown type is an error wrapping
// hostapi.ErrUnknownType; a failed call's error names the resource.
func (e *Engine) Status(ctx context.Context, req StatusRequest) (abi.StatusResponse, error) {
	ref := req.Type + "#" + req.Name
	caller := trust.Caller{
		Resource: ref,
		Grants:   e.opts.Grants,
		Mode:     trust.ModeStatus,
		Log:      func(level, message string) { e.report.Log(ref, level, message) },
	}
	if _, err := e.opts.Plugins.Info(ctx, caller, req.Type); err != nil {
		return abi.StatusResponse{}, err
	}
	resp, err := e.opts.Plugins.Status(ctx, caller, abi.Request{
		Type:       req.Type,
		Name:       req.Name,
		Properties: map[string]any{"name": req.Name},
		WorkingDir: req.Dir,
	})
	if err != nil {
		return resp, fmt.Errorf("%s: %w", ref, err)
	}
	return resp, nil
}
