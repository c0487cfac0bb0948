package host

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// batchTimeoutCap bounds the deadline of one ccm_apply_batch call: a batch
// gets Limits.CallTimeout per request, but a runaway guest must still be
// stopped within minutes, not hours (see batchTimeout).
const batchTimeoutCap = 10 * time.Minute

// ApplyBatch runs ccm_apply for reqs, callers[i] going with reqs[i], in one
// ccm_apply_batch call when the plugin exports it, else one ccm_apply each.
// It returns one result per request in order, fewer when stopOnFailure is set
// and a result has Error. A trap, timeout or limit fails the rest of the
// batch: the error comes with the results that completed before it (none
// for a single batch call, whose results all arrive at its end).
//
// # Notes
//
//   - The requests must be of one type and the callers of one scope: the
//     same Mode, grant chain and limits, because one plugin call, in one
//     instance, acts for all of them. Anything else is refused as a bug of
//     the caller.
//   - Only apply mode is batched. Callers in a read-only mode, or requests
//     narrowing it (effectiveMode), go one by one through Apply, which sets
//     each request's mode flags from the mode.
//   - The batch call acts for callers[0] (its Lookup, Log and Manifest), its
//     Resource naming the whole batch; the plugin's log lines of a batch go to
//     callers[0].Log.
func (h *Host) ApplyBatch(ctx context.Context, callers []trust.Caller, reqs []abi.Request, stopOnFailure bool) ([]abi.Result, error) {
	if err := checkBatch(callers, reqs); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	p, err := h.plugin(pluginID(callers[0], reqs[0].Type))
	if err != nil {
		return nil, err
	}
	batch, err := p.hasExport(ctx, callers[0], abi.ExportApplyBatch)
	if err != nil {
		return nil, err
	}
	if !batch || len(reqs) == 1 || !applyMode(callers, reqs) {
		return h.applyEach(ctx, callers, reqs, stopOnFailure)
	}
	info, err := p.load(ctx, callers[0])
	if err != nil {
		return nil, err
	}
	caller := callers[0]
	caller.Resource = batchName(reqs)
	caps := info.Capabilities
	limits := h.limits.lowered(caller.Limits) // one scope's (checkBatch)
	limits.CallTimeout = batchTimeout(limits.CallTimeout, len(reqs))
	limits.HostCalls = batchHostCalls(limits.HostCalls, len(reqs))
	st := newCallState(abi.ExportApplyBatch, p.typ, caller, limits)
	st.Caps, st.HostCalls, st.Names = &caps, true, &h.names
	release, err := h.lockIfNeeded(ctx, info, caller)
	if err != nil {
		return nil, err
	}
	defer release()
	var resp abi.BatchResponse
	if err := h.exchange(ctx, p, st, abi.BatchRequest{Requests: reqs, StopOnFailure: stopOnFailure}, &resp); err != nil {
		return nil, err
	}
	if err := checkBatchResults(p.typ, resp.Results, len(reqs), stopOnFailure); err != nil {
		return nil, err
	}
	return resp.Results, nil
}

// applyEach is ApplyBatch one request at a time.
func (h *Host) applyEach(ctx context.Context, callers []trust.Caller, reqs []abi.Request, stopOnFailure bool) ([]abi.Result, error) {
	out := make([]abi.Result, 0, len(reqs))
	for i, req := range reqs {
		res, err := h.Apply(ctx, callers[i], req)
		if err != nil {
			return out, err
		}
		out = append(out, res)
		if stopOnFailure && res.Error != "" {
			break
		}
	}
	return out, nil
}

// checkBatch refuses a batch that one plugin call cannot serve.
func checkBatch(callers []trust.Caller, reqs []abi.Request) error {
	if len(callers) != len(reqs) {
		return fmt.Errorf("BUG: ApplyBatch got %d callers for %d requests", len(callers), len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if reqs[i].Type != reqs[0].Type {
			return fmt.Errorf("BUG: ApplyBatch got types %q and %q in one batch (requests 0 and %d)", reqs[0].Type, reqs[i].Type, i)
		}
		if callers[i].Plugin != callers[0].Plugin {
			return fmt.Errorf("BUG: ApplyBatch got plugins %q and %q in one batch (%s and %s)", callers[0].Plugin, callers[i].Plugin, callers[0].Resource, callers[i].Resource)
		}
		if callers[i].Mode != callers[0].Mode {
			return fmt.Errorf("BUG: ApplyBatch got modes %s and %s in one batch (%s and %s)", callers[0].Mode, callers[i].Mode, callers[0].Resource, callers[i].Resource)
		}
		if callers[i].Limits != callers[0].Limits {
			return fmt.Errorf("BUG: ApplyBatch got two sets of limits in one batch (%s and %s); batch only resources of one scope", callers[0].Resource, callers[i].Resource)
		}
		if !sameChain(callers[i].Grants, callers[0].Grants) {
			return fmt.Errorf("BUG: ApplyBatch got two grant chains in one batch (%s and %s); batch only resources of one scope", callers[0].Resource, callers[i].Resource)
		}
	}
	return nil
}

// sameChain reports whether two chains grant the same, grant by grant.
func sameChain(a, b trust.Chain) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true // one scope's chain, passed twice: the usual case
	}
	return reflect.DeepEqual(a, b)
}

// applyMode reports whether the batch runs in plain apply mode, the only
// one a single batch call may serve (see ApplyBatch).
func applyMode(callers []trust.Caller, reqs []abi.Request) bool {
	for i := range reqs {
		if effectiveMode(callers[i], reqs[i]) != trust.ModeApply {
			return false
		}
	}
	return true
}

// batchName names a batch in messages: "file (batch of 3: file#/a … file#/c)".
func batchName(reqs []abi.Request) string {
	first, last := reqs[0], reqs[len(reqs)-1]
	return fmt.Sprintf("%s (batch of %d: %s#%s … %s#%s)", first.Type, len(reqs), first.Type, first.Name, last.Type, last.Name)
}

// batchTimeout is the deadline of a batch of n requests: CallTimeout each,
// as they would have one by one, but no more than batchTimeoutCap (or one
// CallTimeout, when that is longer), so a runaway guest is still stopped
// within minutes.
func batchTimeout(perCall time.Duration, n int) time.Duration {
	limit := max(perCall, batchTimeoutCap)
	if n <= 0 || perCall >= limit/time.Duration(n) {
		return limit
	}
	return perCall * time.Duration(n)
}

// batchHostCalls is the host-call budget of a batch of n requests: perCall
// each, as they would have one by one (saturating).
func batchHostCalls(perCall int64, n int) int64 {
	if n <= 1 {
		return perCall
	}
	if perCall > math.MaxInt64/int64(n) {
		return math.MaxInt64
	}
	return perCall * int64(n)
}

// checkBatchResults holds the plugin to the batch contract: one result per
// request, fewer only when stopOnFailure stopped it at a failed one.
func checkBatchResults(typ string, results []abi.Result, n int, stopOnFailure bool) error {
	switch {
	case len(results) == n:
		return nil
	case len(results) > n:
		return fmt.Errorf("plugin for type %q: %s returned %d results for %d requests", typ, abi.ExportApplyBatch, len(results), n)
	case !stopOnFailure:
		return fmt.Errorf("plugin for type %q: %s returned %d results for %d requests without stop_on_failure", typ, abi.ExportApplyBatch, len(results), n)
	case len(results) == 0 || results[len(results)-1].Error == "":
		return fmt.Errorf("plugin for type %q: %s stopped after %d of %d requests without a failed result", typ, abi.ExportApplyBatch, len(results), n)
	}
	return nil
}
