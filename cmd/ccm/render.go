package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ccm-dev/ccm/runtime/engine"
	"go.yaml.in/yaml/v3"
)

// renderedDoc is one rendered manifest as a loadable document: data + ccm.
func renderedDoc(d engine.Rendered) map[string]any {
	c := map[string]any{
		"fail_on_error": d.FailOnError,
		"resources":     d.Resources,
	}
	if d.PreMessage != "" {
		c["pre_message"] = d.PreMessage
	}
	if d.PostMessage != "" {
		c["post_message"] = d.PostMessage
	}
	if len(d.Plugins) > 0 {
		c["plugins"] = d.Plugins
	}
	doc := map[string]any{"ccm": c}
	if len(d.Data) > 0 {
		doc["data"] = d.Data
	}
	return doc
}

// writeRendered prints each manifest of a --render as its own YAML
// document: a loadable manifest (data + ccm) headed by a comment naming
// the file, children after their parent in the order a run reaches them.
func writeRendered(w io.Writer, docs []engine.Rendered) error {
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprintf(w, "# manifest: %s (level %d)\n", d.File, d.Depth)
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(renderedDoc(d)); err != nil {
			return fmt.Errorf("render %s: %w", d.File, err)
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writeRenderedJSON is --render --json: one JSON document,
// {"manifests": [{"file", "level", "manifest"}]}, in the same order.
func writeRenderedJSON(w io.Writer, docs []engine.Rendered) error {
	type entry struct {
		File     string         `json:"file"`
		Level    int            `json:"level"`
		Manifest map[string]any `json:"manifest"`
	}
	out := struct {
		Manifests []entry `json:"manifests"`
	}{Manifests: []entry{}}
	for _, d := range docs {
		out.Manifests = append(out.Manifests, entry{File: d.File, Level: d.Depth, Manifest: renderedDoc(d)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
