package engine

import (
	"context"
	"maps"
	"slices"
)

// Rendered is one manifest as ccm resolved it: its data after hierarchy,
// apply data and --data, and every resource in direct form with defaults
// applied, ensure filled and templates expanded. Deferred fields are
// expanded too; one whose expansion fails (e.g. a lookup only valid when
// control lets the resource run) is left as written.
type Rendered struct {
	File        string
	Depth       int
	Data        map[string]any
	FailOnError bool
	PreMessage  string           // ccm.pre_message, templates expanded
	PostMessage string           // ccm.post_message, templates expanded
	Plugins     []map[string]any // its own ccm.plugins: {path (absolute), sha256}
	Resources   []map[string]any // {type: {name: ..., properties...}}
}

// Render loads the manifest at path and, through its apply resources, every
// child manifest, checking them as a run would, and returns them in the
// order a run would reach them. Nothing is applied. A child that cannot be
// loaded is an error here, since the point is to show what would run.
func (e *Engine) Render(ctx context.Context, path string) ([]Rendered, error) {
	defer e.forgetHandles(ctx)
	root, err := e.rootScope(ctx, path, true)
	if err != nil {
		return nil, err
	}
	var out []Rendered
	err = e.render(ctx, root, nil, &out)
	return out, err
}

func (e *Engine) render(ctx context.Context, s scope, passed map[string]any, out *[]Rendered) error {
	p, err := e.load(ctx, s, passed)
	if err != nil {
		return err
	}
	s.ancestry = p.ancestry
	r := Rendered{File: e.display(p.file), Depth: s.depth, Data: p.data, FailOnError: p.failOnError, PreMessage: p.pre, PostMessage: p.post, Plugins: p.plugins.own(p.file)}
	for _, res := range p.resources {
		r.Resources = append(r.Resources, map[string]any{res.typ: e.renderResource(p, res)})
	}
	*out = append(*out, r)
	for _, res := range p.resources {
		if res.typ != applyType {
			continue
		}
		child, err := e.childScope(ctx, s, res)
		if err != nil {
			return p.where(res, "%v", err)
		}
		if err := e.render(ctx, child, res.apply.data, out); err != nil {
			return err
		}
	}
	return nil
}

// renderResource is a resource in direct form. A deferred field whose
// expansion fails is shown as written, with a warning naming the failure
// the run would report for that resource.
func (e *Engine) renderResource(p *plan, r *resource) map[string]any {
	props := maps.Clone(r.props)
	if r.info != nil {
		for _, k := range r.info.Deferred {
			if v, ok := props[k]; ok {
				out, err := p.x.Expand(v)
				if err != nil {
					e.report.Log(e.display(p.file), "warn", p.where(r, "%s: %v; a run fails this resource", k, err).Error())
					continue
				}
				props[k] = out
			}
		}
	}
	if r.apply != nil {
		for k, v := range r.src.Properties {
			props[k] = v
		}
		if r.apply.data != nil {
			props["data"] = r.apply.data
		}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			props[k] = v
		}
	}
	set("alias", r.alias, r.alias != "")
	set("provider", r.provider, r.provider != "")
	set("require", slices.Clone(r.src.Require), len(r.src.Require) > 0)
	set("subscribe", slices.Clone(r.src.Subscribe), len(r.src.Subscribe) > 0)
	// Raw: its templates are expanded when the resource is stable.
	set("register_when_stable", r.src.RegisterWhenStable, len(r.src.RegisterWhenStable) > 0)
	if c := r.src.Control; c.If != "" || c.Unless != "" {
		ctl := map[string]any{}
		set := func(k, v string) {
			if v != "" {
				ctl[k] = v
			}
		}
		set("if", c.If)
		set("unless", c.Unless)
		props["control"] = ctl
	}
	if len(r.src.HealthChecks) > 0 {
		var hcs []any
		for _, h := range r.src.HealthChecks {
			hc := map[string]any{"tries": h.Tries, "format": h.Format}
			if h.Name != "" {
				hc["name"] = h.Name
			}
			if h.Command != "" {
				hc["command"] = h.Command
			}
			if h.GossRules != nil {
				hc["goss_rules"] = h.GossRules
			}
			if h.TrySleep > 0 {
				hc["try_sleep"] = h.TrySleep.String()
			}
			if h.Timeout > 0 {
				hc["timeout"] = h.Timeout.String()
			}
			hcs = append(hcs, hc)
		}
		props["health_checks"] = hcs
	}
	return props
}
