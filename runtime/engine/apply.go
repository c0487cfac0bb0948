package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
)

// applyType is the resource type the engine itself implements: the host owns
// manifests and their recursion, so apply is not a plugin.
const applyType = "apply"

// applySpec holds an apply resource's own properties (docs/apply.md).
type applySpec struct {
	noop            bool
	healthCheckOnly bool
	allowApply      bool
	data            map[string]any
	grants          *trust.Grant
	limits          trust.Limits
	pin             string // sha256 of a remote child bundle
}

// parseApply checks an apply resource's properties (already expanded).
func parseApply(props map[string]any, dir string) (*applySpec, error) {
	spec := &applySpec{allowApply: true}
	var unknown []string
	for k, v := range props {
		var err error
		switch k {
		case "ensure":
			if s, _ := v.(string); s != "present" {
				err = fmt.Errorf("ensure %v is not supported: apply only knows present", v)
			}
		case "noop":
			spec.noop, err = boolProp(k, v)
		case "health_check_only":
			spec.healthCheckOnly, err = boolProp(k, v)
		case "allow_apply":
			spec.allowApply, err = boolProp(k, v)
		case "data":
			if v == nil {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("data must be a map, got %T", v)
			}
			spec.data = m
		case "grants":
			spec.grants, err = parseGrant(v, dir)
		case "limits":
			spec.limits, err = trust.DecodeLimits(v)
		case "sha256":
			s, _ := v.(string)
			spec.pin, err = bundle.ParsePin(s)
		default:
			unknown = append(unknown, k)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown apply properties %s; apply accepts ensure, noop, health_check_only, allow_apply, data, grants, limits and sha256", strings.Join(unknown, ", "))
	}
	return spec, nil
}

func boolProp(k string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s must be true or false, got %v", k, v)
	}
	return b, nil
}

// parseGrant decodes a grants property strictly; relative path globs are
// taken from dir, the directory of the manifest holding the apply
// (trust.DecodeGrantIn).
func parseGrant(v any, dir string) (*trust.Grant, error) {
	g, err := trust.DecodeGrantIn(v, dir)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	return &g, nil
}

// runApply runs the child manifest of an apply resource in a scope narrowed
// from s, inside the same session, and reports on ev.
func (e *Engine) runApply(ctx context.Context, s scope, p *plan, r *resource, ev *session.Event) {
	spec := r.apply
	ev.FinalEnsure = "present"
	child, err := e.childScope(ctx, s, r)
	ev.Noop = child.noop
	ev.HealthCheckOnly = child.healthCheckOnly
	if err != nil {
		ev.Fail(err.Error())
		return
	}
	cp, err := e.load(ctx, child, spec.data)
	if err != nil {
		ev.Fail(fmt.Sprintf("child manifest %s: %v", e.display(child.file), err))
		return
	}
	child.ancestry = cp.ancestry
	out := e.runPlan(ctx, child, cp)
	ev.Status = map[string]any{
		"manifest":  e.display(child.file),
		"resources": out.total,
		"changed":   out.changed,
		"failed":    out.failed,
	}
	ev.Messages = append(ev.Messages, fmt.Sprintf("%d resources: %d changed, %d failed", out.total, out.changed, out.failed))
	if out.failed > 0 {
		ev.Fail(fmt.Sprintf("child manifest %s had %d failed resources", e.display(child.file), out.failed))
		return
	}
	ev.Changed = out.changed > 0
}

// childScope narrows s for the child of apply resource r: the child's own
// directory, one level deeper, noop and health-check-only only ever added,
// grants intersected, limits only ever lowered. It fails past MaxDepth, before the child is read.
func (e *Engine) childScope(ctx context.Context, s scope, r *resource) (scope, error) {
	spec := r.apply
	child := scope{
		file:            resolvePath(s.dir, r.name),
		depth:           s.depth + 1,
		noop:            s.noop || spec.noop,
		healthCheckOnly: s.healthCheckOnly || spec.healthCheckOnly,
		grants:          s.grants,
		readGrants:      s.grants,
		limits:          s.limits.Lower(spec.limits),
		allowApply:      spec.allowApply,
		plugins:         r.inherit,
		ancestry:        s.ancestry,
	}
	child.dir = filepath.Dir(child.file)
	if spec.grants != nil {
		child.grants = s.grants.Narrow(*spec.grants)
	}
	if child.depth > MaxDepth {
		return child, fmt.Errorf("maximum apply depth of %d exceeded: %s would run at level %d", MaxDepth, e.display(child.file), child.depth)
	}
	return child, e.childSource(ctx, s, r, &child)
}

// childSource fetches the bundle of a remote child (checked against the
// parent's net grant and the apply's sha256 pin) or keeps a relative child
// of a bundle inside that bundle.
func (e *Engine) childSource(ctx context.Context, s scope, r *resource, child *scope) error {
	switch {
	case isRemote(r.name):
		if e.opts.Remote == nil {
			return fmt.Errorf("child manifest %s: remote manifests are not enabled", r.name)
		}
		file, root, err := e.opts.Remote(ctx, r.name, r.apply.pin, s.grants)
		if err != nil {
			return err
		}
		e.remember(root, r.name)
		child.file, child.dir, child.bundle = file, filepath.Dir(file), root
		// The bundle was fetched and verified by the host for this apply;
		// its manifest is read whatever the parent's fs_read says.
		child.readGrants = nil
	case r.apply.pin != "":
		return fmt.Errorf("sha256 pins a remote bundle (https://, obj://); %s is a local file", r.name)
	case s.bundle != "":
		rel, err := filepath.Rel(s.bundle, child.file)
		if filepath.IsAbs(r.name) || err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("child manifest %s: a manifest of a remote bundle may only apply files inside its bundle or other remote bundles", r.name)
		}
		child.bundle = s.bundle
		child.readGrants = nil
	}
	return nil
}
