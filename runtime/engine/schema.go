package engine

import (
	"slices"
	"sync"

	"github.com/ccm-dev/ccm/runtime/schema"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// schemaCache holds each plugin's compiled properties schema, keyed by the
// schema's text: a plugin is compiled once per run however many resources
// and manifests use it, and two plugins with the same schema share it.
// The zero value is ready to use.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]compiledSchema
}

type compiledSchema struct {
	s   *schema.Schema
	err error
}

func (c *schemaCache) get(info *abi.PluginInfo) (*schema.Schema, error) {
	if len(info.PropertiesSchema) == 0 {
		return nil, nil
	}
	key := string(info.PropertiesSchema)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.m[key]; ok {
		return cs.s, cs.err
	}
	s, err := schema.Compile(info.PropertiesSchema)
	if c.m == nil {
		c.m = map[string]compiledSchema{}
	}
	c.m[key] = compiledSchema{s, err}
	return s, err
}

// checkSchema validates the properties of resources rs (all of one type)
// against their plugin's properties_schema, before ccm_validate. It returns
// the resources that passed, which go on to the plugin, and one error per
// problem: "file:line: type#name: property "x": reason". A resource that
// fails its schema is not sent to ccm_validate, which would only say the
// same in other words. A plugin whose schema does not compile fails every
// one of its resources, reported once per manifest.
func (e *Engine) checkSchema(p *plan, rs []*resource) (passed []*resource, errs []error) {
	if e.opts.NoSchemaValidation || len(rs) == 0 {
		return rs, nil
	}
	s, err := e.schemas.get(rs[0].info)
	if err != nil {
		return nil, []error{p.where(rs[0], "plugin %s %s: %v; the plugin's ccm_describe is broken, fix or replace the plugin",
			rs[0].info.Type, rs[0].info.Version, err)}
	}
	if s == nil {
		return rs, nil
	}
	passed = rs[:0:0]
	for _, r := range rs {
		problems := s.Strings(schemaProps(r, r.props))
		for _, msg := range problems {
			errs = append(errs, p.where(r, "%s", msg))
		}
		if len(problems) == 0 {
			passed = append(passed, r)
		}
	}
	return passed, errs
}

// schemaProblems validates a resource's final properties (deferred fields
// expanded) against its plugin's schema when it runs.
func (e *Engine) schemaProblems(r *resource, props map[string]any) []string {
	if e.opts.NoSchemaValidation {
		return nil
	}
	s, err := e.schemas.get(r.info)
	if err != nil {
		return []string{err.Error()}
	}
	return s.Strings(schemaProps(r, props))
}

// schemaProps is what the schema sees of a resource's properties: a null
// property is unset (as in ccm_validate), and a deferred property that still
// holds a template is a placeholder that satisfies any schema.
func schemaProps(r *resource, props map[string]any) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		switch {
		case v == nil:
		case r.pending && slices.Contains(r.info.Deferred, k) && hasTemplate(v):
			out[k] = schema.Placeholder{}
		default:
			out[k] = v
		}
	}
	return out
}
