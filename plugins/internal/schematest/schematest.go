// Package schematest checks, in a built-in plugin's tests, that the
// properties_schema it declares accepts what its ccm_validate accepts: the
// host validates properties against the schema first, so a schema stricter
// than the plugin would reject valid manifests. It is used by tests only.
package schematest

import (
	"slices"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/props"
	"github.com/ccm-dev/ccm/runtime/schema"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Accepts fails t unless info's schema compiles and accepts p the way the
// engine presents it at load: null properties unset, deferred properties
// still holding a template replaced by a placeholder.
func Accepts(t *testing.T, info abi.PluginInfo, p map[string]any) {
	t.Helper()
	if problems := Problems(t, info, p); len(problems) > 0 {
		t.Fatalf("properties_schema rejects properties that ccm_validate accepts: %q", problems)
	}
}

// Problems returns what info's schema finds wrong with p (see Accepts).
func Problems(t *testing.T, info abi.PluginInfo, p map[string]any) []string {
	t.Helper()
	s, err := schema.Compile(info.PropertiesSchema)
	if err != nil {
		t.Fatalf("properties_schema does not compile: %v", err)
	}
	in := make(map[string]any, len(p))
	for k, v := range p {
		switch {
		case v == nil:
		case slices.Contains(info.Deferred, k) && hasTemplate(v):
			in[k] = schema.Placeholder{}
		default:
			in[k] = v
		}
	}
	return s.Strings(in)
}

func hasTemplate(v any) bool {
	switch t := v.(type) {
	case string:
		return props.HasTemplate(t)
	case []any:
		return slices.ContainsFunc(t, hasTemplate)
	}
	return false
}
