package data

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

// ParseAssignments turns CLI "--data" values into a map. "k=v" sets one
// key to the string v (dotted keys make nested maps: "a.b=1" gives
// {a: {b: "1"}}); a value without "=" names a YAML/JSON file whose map is
// deep-merged in. Later values win.
func ParseAssignments(values []string) (map[string]any, error) {
	out := map[string]any{}
	for _, v := range values {
		key, val, ok := strings.Cut(v, "=")
		if !ok {
			m, err := LoadFile(v)
			if err != nil {
				return nil, fmt.Errorf("--data %s: %w", v, err)
			}
			out = Merge(out, m)
			continue
		}
		if err := SetPath(out, key, val); err != nil {
			return nil, fmt.Errorf("--data %s: %w", v, err)
		}
	}
	return out, nil
}

// SetPath sets m[a][b][c] = v for the dotted key "a.b.c", creating maps
// on the way and replacing a non-map value in the way.
func SetPath(m map[string]any, dotted string, v any) error {
	parts := strings.Split(dotted, ".")
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("key %q has an empty part; write keys like a.b.c", dotted)
		}
	}
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return nil
}

// LoadFile reads a YAML or JSON file holding a map (an empty file is an
// empty map).
func LoadFile(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w; give an existing YAML/JSON file or use key=value", path, err)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	v, err := manifest.DecodeValue(b, path)
	if err != nil {
		return nil, err
	}
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return m, nil
	}
	return nil, fmt.Errorf("%s: the document must be a map of keys, not %T", path, v)
}
