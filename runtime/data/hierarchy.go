package data

import (
	"fmt"

	"github.com/ccm-dev/ccm/runtime/template"
)

// Merge modes of a hierarchy.
const (
	MergeFirst = "first"
	MergeDeep  = "deep"
)

// Resolve returns the data of one manifest (docs/manifests.md, "Data and
// hierarchy"):
//
//  1. doc (the manifest's `data`) with its strings expanded against facts
//     only, strictly (a missing fact or lookup without a default is an
//     error; types are kept);
//  2. each `hierarchy.order` entry expanded leniently (a missing fact or
//     lookup gives ""); an entry counts
//     only when it has no expression or one of its expressions gave a
//     non-empty value, and it selects `overrides[entry]` when present. No
//     hierarchy means the order ["default"];
//  3. `merge: first` (default): the first selected override's top-level
//     keys replace the base keys wholesale and resolution stops;
//     `merge: deep`: every selected override is merged in order, maps
//     recursively, lists concatenated, scalars overwritten, so a later
//     level beats an earlier one (CCM's rule, kept for compatibility);
//  4. each layer deep-merged over the result in order (apply-resource
//     data, then CLI data last): maps recursively, everything else replaced.
//
// The result is a new map; no input is mutated.
func Resolve(doc, hierarchy, overrides, facts map[string]any, layers ...map[string]any) (map[string]any, error) {
	order, mode, err := readHierarchy(hierarchy)
	if err != nil {
		return nil, err
	}
	x := template.NewHiera(facts)
	base, err := expandMap(x, doc)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	out := base
	for i, entry := range order {
		key, ok, err := x.Key(entry)
		if err != nil {
			return nil, fmt.Errorf("hierarchy.order[%d]: %w", i, err)
		}
		if !ok {
			continue
		}
		raw, found := overrides[key]
		if !found {
			continue
		}
		level, ok := raw.(map[string]any)
		if raw != nil && !ok {
			return nil, fmt.Errorf("overrides.%s: an override must be a map of data keys, not %T", key, raw)
		}
		level, err = expandMap(x, level)
		if err != nil {
			return nil, fmt.Errorf("overrides.%s: %w", key, err)
		}
		if mode == MergeFirst {
			for k, v := range level {
				out[k] = v
			}
			break
		}
		out = mergeDeep(out, level)
	}
	for _, l := range layers {
		if l != nil {
			out = Merge(out, l)
		}
	}
	return out, nil
}

// readHierarchy checks the hierarchy's shape and returns its order and
// merge mode.
func readHierarchy(h map[string]any) ([]string, string, error) {
	if h == nil {
		return []string{"default"}, MergeFirst, nil
	}
	for k := range h {
		if k != "order" && k != "merge" {
			return nil, "", fmt.Errorf("hierarchy.%s: unknown key; allowed: merge, order", k)
		}
	}
	mode := MergeFirst
	if m, present := h["merge"]; present {
		s, _ := m.(string)
		if s != MergeFirst && s != MergeDeep {
			return nil, "", fmt.Errorf("hierarchy.merge: %v is not a merge mode; use first or deep", m)
		}
		mode = s
	}
	var order []string
	switch o := h["order"].(type) {
	case []string:
		order = o
	case []any:
		order = make([]string, len(o))
		for i, e := range o {
			s, ok := e.(string)
			if !ok {
				return nil, "", fmt.Errorf("hierarchy.order[%d]: must be a string, not %T", i, e)
			}
			order[i] = s
		}
	default:
		return nil, "", fmt.Errorf("hierarchy.order: a hierarchy needs an order list such as [\"os:${ lookup('facts.host.info.platformFamily') }\", default]")
	}
	return order, mode, nil
}

// expandMap expands m's strings in Hiera mode into a new map.
func expandMap(x *template.Expander, m map[string]any) (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	v, err := x.Expand(m)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
