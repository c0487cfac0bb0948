package sdk

import (
	"errors"
	"fmt"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/flat"
	"github.com/ccm-dev/ccm/sdk/internal/wire"
)

// errNotRegistered is what every export answers when the plugin never called
// Register: the host shows it, so it says what to do.
var errNotRegistered = errors.New("no resource registered: the plugin must call sdk.Register from init")

// serve runs one export for r: it decodes input, calls r, and encodes the
// answer. It is the whole of an export's logic and is plain Go, so it is
// unit-tested natively; the wasip1 exports only move bytes in and out.
//
// A panic in r becomes an error (the host reports it as a failed call), so the
// guest never traps with its state half-updated.
func serve(export string, r Resource, h Host, input []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("plugin panicked in %s: %s", export, panicText(p))
		}
	}()
	if r == nil {
		return nil, errNotRegistered
	}
	switch export {
	case abi.ExportDescribe:
		info := r.Info()
		if info.ABI == 0 {
			// The SDK is what the plugin was built against, so it knows the ABI.
			info.ABI = abi.Version
		}
		// Handles are the SDK's to keep: it says so for a Preparer only.
		_, info.Handles = r.(Preparer)
		return wire.Marshal(info)
	case abi.ExportValidate:
		var req abi.ValidateRequest
		if err := decodeInput(export, input, &req); err != nil {
			return nil, err
		}
		return wire.Marshal(validateOne(r, req))
	case abi.ExportValidateBatch:
		// One request at a time: each one's decoded properties are garbage
		// once validated (a Preparer keeps only what it parsed).
		resp := abi.ValidateBatchResponse{Results: []abi.ValidateResponse{}}
		var err error
		if fp, ok := r.(FlatPreparer); ok {
			// One flat.Props for the whole batch, emptied for each request.
			err = wire.EachValidateRequestFlat(input, &flat.Props{}, func(props *flat.Props, provider string) {
				resp.Results = append(resp.Results, validateFlat(fp, props, provider))
			})
		} else {
			err = wire.EachValidateRequest(input, func(one abi.ValidateRequest) {
				resp.Results = append(resp.Results, validateOne(r, one))
			})
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s input: %w", export, err)
		}
		return wire.Marshal(resp)
	case abi.ExportStatus:
		var req abi.Request
		if err := decodeInput(export, input, &req); err != nil {
			return nil, err
		}
		return wire.Marshal(r.Status(h, req))
	case abi.ExportApply:
		var req abi.Request
		if err := decodeInput(export, input, &req); err != nil {
			return nil, err
		}
		return wire.Marshal(applyRequest(r, h, req))
	case abi.ExportApplyBatch:
		var req abi.BatchRequest
		if err := decodeInput(export, input, &req); err != nil {
			return nil, err
		}
		return wire.Marshal(applyBatch(r, h, req))
	}
	return nil, fmt.Errorf("unknown export %q", export)
}

func validate(r Resource, req abi.ValidateRequest) abi.ValidateResponse {
	errs := r.Validate(req)
	if errs == nil {
		errs = []string{} // "errors": [] reads better than null in host logs
	}
	return abi.ValidateResponse{Errors: errs}
}

// applyBatch applies each request in order. A panic in one Apply fails that
// request only (its Result carries the panic), so the results of the ones
// already applied, which did change the system, still reach the host. Each
// result gets the time its Apply took (DurationNS, at least 1), unless the
// Resource set it: the host sees only the batch's time.
func applyBatch(r Resource, h Host, req abi.BatchRequest) abi.BatchResponse {
	resp := abi.BatchResponse{Results: make([]abi.Result, 0, len(req.Requests))}
	for _, one := range req.Requests {
		start := time.Now()
		res := applyOne(r, h, one)
		if res.DurationNS == 0 {
			res.DurationNS = max(1, time.Since(start).Nanoseconds())
		}
		resp.Results = append(resp.Results, res)
		if req.StopOnFailure && res.Error != "" {
			break
		}
	}
	return resp
}

func applyOne(r Resource, h Host, req abi.Request) (res abi.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = abi.Result{Error: "plugin panicked in " + abi.ExportApplyBatch + ": " + panicText(p)}
		}
	}()
	return applyRequest(r, h, req)
}

func decodeInput(export string, input []byte, v any) error {
	if err := wire.Unmarshal(input, v); err != nil {
		return fmt.Errorf("decode %s input: %w", export, err)
	}
	return nil
}

func panicText(p any) string {
	switch v := p.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return fmt.Sprint(p)
}
