package main

import (
	"fmt"
	"io"

	"github.com/ccm-dev/ccm/runtime/engine"
	"go.yaml.in/yaml/v3"
)

// writeRendered prints each manifest of a --render as its own YAML
// document: a loadable manifest (data + ccm) headed by a comment naming
// the file, children after their parent in the order a run reaches them.
func writeRendered(w io.Writer, docs []engine.Rendered) error {
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprintf(w, "# manifest: %s (level %d)\n", d.File, d.Depth)
		doc := map[string]any{
			"ccm": map[string]any{
				"fail_on_error": d.FailOnError,
				"resources":     d.Resources,
			},
		}
		if len(d.Plugins) > 0 {
			doc["ccm"].(map[string]any)["plugins"] = d.Plugins
		}
		if len(d.Data) > 0 {
			doc["data"] = d.Data
		}
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("render %s: %w", d.File, err)
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	return nil
}
