package data

import (
	"fmt"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

// ResolveDocument resolves one Hiera document (docs/manifests.md): a YAML or
// JSON map whose `data`, `hierarchy` and `overrides` keys feed Resolve;
// other keys are ignored so that a whole manifest is a valid input. The
// layers (CLI -D data, --data and the like) are deep-merged over the
// result in order, and only then are the annotations of the document's
// `data` checked (docs/manifests.md), so that a layer may satisfy a
// @require. file names the document in errors.
//
// warnings are unknown @directives; err joins every violation, each
// reading "FILE:LINE: data.path: problem".
func ResolveDocument(src []byte, file string, facts map[string]any, layers ...map[string]any) (out map[string]any, warnings []string, err error) {
	v, err := manifest.DecodeValue(src, file)
	if err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	switch t := v.(type) {
	case nil:
	case map[string]any:
		doc = t
	default:
		return nil, nil, fmt.Errorf("%s: a Hiera document must be a map with data, hierarchy and overrides, not %T", file, v)
	}
	parts := map[string]map[string]any{}
	for _, k := range []string{"data", "hierarchy", "overrides"} {
		raw, present := doc[k]
		if !present || raw == nil {
			continue
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("%s: %s must be a map, not %T", file, k, raw)
		}
		parts[k] = m
	}
	out, err = Resolve(parts["data"], parts["hierarchy"], parts["overrides"], facts, layers...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	anns, err := manifest.ParseAnnotations(src, file)
	if err != nil {
		return nil, nil, err
	}
	warnings, err = CheckAnnotations(file, anns, out)
	if err != nil {
		return nil, warnings, err
	}
	return out, warnings, nil
}
