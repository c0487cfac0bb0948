package sdk

import (
	"fmt"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// Preparer is a Resource that keeps what it parsed when validating, so the
// host can apply a resource it validated without sending and decoding its
// properties again (abi.Request.Handle). The SDK sets PluginInfo.Handles for
// a Resource that implements it, keeps each prepared value under a handle
// it returns in the validation response, and calls ApplyPrepared with that
// value when an apply request names the handle.
//
// Apply (and Validate) must still work on their own: the host sends the
// properties in full whenever it cannot use a handle (a resource whose
// deferred templates were expanded at apply time, a fresh plugin instance,
// a run that applies without validating). For validation the SDK calls
// Prepare instead of Validate.
type Preparer interface {
	Resource
	// Prepare validates req as Validate does and, when it is valid (errs
	// empty), returns what ApplyPrepared needs of it: typically the parsed
	// properties. The value is kept until its resource is applied (at most
	// once) or the plugin instance ends; keep it small and do not keep req
	// itself.
	Prepare(req abi.ValidateRequest) (prepared any, errs []string)
	// ApplyPrepared is Apply for a resource Prepare accepted. req carries
	// everything of an apply request but Properties (nil): the resource's
	// properties are exactly the ones Prepare saw.
	ApplyPrepared(h Host, req abi.Request, prepared any) abi.Result
}

// FlatPreparer is a Preparer that reads the properties of a batch's
// validation requests (ccm_validate_batch, what a run sends) flat: the SDK
// decodes each request's properties into a flat.Props, without a map or a
// boxed value per property, and calls PrepareFlat instead of Prepare. A
// single validation request (ccm_validate) still goes to Prepare, so both
// must accept and refuse the same properties with the same errors; a type
// typically implements Prepare as PrepareFlat(flat.FromMap(req.Properties),
// req.Provider).
type FlatPreparer interface {
	Preparer
	// PrepareFlat is Prepare for the properties props (name and ensure
	// included, common properties removed) and provider. props is valid
	// only during the call: keep what is read from it, not props.
	PrepareFlat(props *flat.Props, provider string) (prepared any, errs []string)
}

// Bounds of what the SDK keeps for prepared resources. Past either, a valid
// resource gets no handle and the host sends its properties at apply, as it
// does for any plugin: memory stays bounded whatever a run validates without
// applying (resources skipped by control, unmet requirements, noop runs that
// stop early, status runs).
const (
	maxKept      = 1 << 16
	maxKeptBytes = 8 << 20
	// keptOverhead is what one kept value costs beyond its properties'
	// text: the map entry, the value's header and its parsed fields.
	keptOverhead = 128
)

// kept is what this plugin instance prepared: one Resource per module, one
// call at a time (the host serializes calls to an instance), so no lock.
var kept keeper

type keeper struct {
	next   int64
	values map[int64]keptValue
	bytes  int
}

type keptValue struct {
	v    any
	size int
}

// keep stores v, whose properties were props, and returns its handle, or 0
// when a bound is reached.
func (k *keeper) keep(v any, props map[string]any) int64 {
	return k.keepSized(v, approxSize(props))
}

// keepSized is keep for properties weighing size (approxSize).
func (k *keeper) keepSized(v any, size int) int64 {
	size += keptOverhead
	if len(k.values) >= maxKept || k.bytes+size > maxKeptBytes || k.next >= 1<<31-1 {
		return 0
	}
	if k.values == nil {
		k.values = make(map[int64]keptValue)
	}
	k.next++
	k.values[k.next] = keptValue{v: v, size: size}
	k.bytes += size
	return k.next
}

// take returns the value kept under handle and forgets it.
func (k *keeper) take(handle int64) (any, bool) {
	e, ok := k.values[handle]
	if !ok {
		return nil, false
	}
	delete(k.values, handle)
	k.bytes -= e.size
	return e.v, true
}

// approxSize is about what decoded properties weigh: their text, plus a
// word per entry. What a Preparer keeps is typically no larger.
func approxSize(v any) int {
	switch t := v.(type) {
	case string:
		return len(t)
	case map[string]any:
		n := 0
		for k, e := range t {
			n += 16 + len(k) + approxSize(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range t {
			n += 16 + approxSize(e)
		}
		return n
	}
	return 8
}

// approxFlatSize is approxSize of props.Map(), without making the map.
func approxFlatSize(props *flat.Props) int {
	n := 0
	for i := range props.Len() {
		e := props.At(i)
		n += 16 + len(e.Key)
		switch v := e.Value; v.Kind() {
		case flat.KindString:
			n += len(v.Str())
		case flat.KindList, flat.KindMap:
			n += approxSize(v.Any())
		default:
			n += 8
		}
	}
	return n
}

// validateOne answers one validation request, keeping what a Preparer
// prepared when the resource is valid.
func validateOne(r Resource, req abi.ValidateRequest) abi.ValidateResponse {
	p, ok := r.(Preparer)
	if !ok {
		return validate(r, req)
	}
	v, errs := p.Prepare(req)
	if len(errs) > 0 {
		return abi.ValidateResponse{Errors: errs}
	}
	return abi.ValidateResponse{Errors: []string{}, Handle: kept.keep(v, req.Properties)}
}

// validateFlat is validateOne for a FlatPreparer and flat properties.
func validateFlat(p FlatPreparer, props *flat.Props, provider string) abi.ValidateResponse {
	v, errs := p.PrepareFlat(props, provider)
	if len(errs) > 0 {
		return abi.ValidateResponse{Errors: errs}
	}
	return abi.ValidateResponse{Errors: []string{}, Handle: kept.keepSized(v, approxFlatSize(props))}
}

// applyRequest applies req: by its handle when it has one, else through
// Apply.
func applyRequest(r Resource, h Host, req abi.Request) abi.Result {
	if req.Handle == 0 {
		return r.Apply(h, req)
	}
	p, ok := r.(Preparer)
	if !ok {
		return abi.Result{Error: fmt.Sprintf("the host sent handle %d, but this plugin keeps no validated resources (it does not implement sdk.Preparer); this is a bug in the host", req.Handle)}
	}
	v, ok := kept.take(req.Handle)
	if !ok {
		return abi.Result{Error: fmt.Sprintf("unknown validated-resource handle %d: this plugin instance did not validate it, or already applied it; this is a bug in the host, run again", req.Handle)}
	}
	return p.ApplyPrepared(h, req, v)
}
