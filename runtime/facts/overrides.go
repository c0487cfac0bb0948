package facts

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/runtime/data"
)

// WithOverrides merges a --facts FILE (YAML/JSON map; "" for none) and
// then --fact k=v values (dotted keys nest, values are strings) over base,
// into a new map. CLI k=v wins over the file, as CCM's docs say (its
// binary does the opposite.
func WithOverrides(base map[string]any, factsFile string, kv []string) (map[string]any, error) {
	out := data.Merge(base, nil)
	if factsFile != "" {
		m, err := data.LoadFile(factsFile)
		if err != nil {
			return nil, fmt.Errorf("--facts: %w", err)
		}
		out = data.Merge(out, m)
	}
	cli := map[string]any{}
	for _, s := range kv {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--fact %q: expected key=value, such as --fact env=prod", s)
		}
		if err := data.SetPath(cli, k, v); err != nil {
			return nil, fmt.Errorf("--fact %q: %w", s, err)
		}
	}
	return data.Merge(out, cli), nil
}
