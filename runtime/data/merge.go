package data

// Merge deep-merges src over dst into a new map: maps recursively,
// everything else (lists included) replaced by src's value. Neither input
// is mutated and the result shares no map or list with them.
func Merge(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = Copy(v)
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = Merge(dm, sm)
				continue
			}
		}
		out[k] = Copy(v)
	}
	return out
}

// Copy deep-copies maps and lists of plain values; other values are
// returned as they are.
func Copy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = Copy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Copy(e)
		}
		return out
	}
	return v
}

// mergeDeep is Hiera's `merge: deep`: maps recursively, lists
// concatenated (dst first), scalars overwritten by src.
func mergeDeep(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = Copy(v)
	}
	for k, v := range src {
		switch sv := v.(type) {
		case map[string]any:
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeDeep(dm, sv)
				continue
			}
		case []any:
			if dl, ok := out[k].([]any); ok {
				out[k] = append(dl, Copy(sv).([]any)...)
				continue
			}
		}
		out[k] = Copy(v)
	}
	return out
}
