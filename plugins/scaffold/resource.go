package main

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// scaffoldType implements sdk.Resource; it keeps nothing between resources.
type scaffoldType struct{}

// Validate checks the properties statically.
func (*scaffoldType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parseSpec(name, req.Properties, req.Provider)
	return errs
}

// Status renders the source in memory and compares it with the target; it
// never mutates and runs no post command.
func (*scaffoldType) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	resp := abi.StatusResponse{Provider: providerChoria}
	if _, ok := req.Properties["source"]; !ok {
		// `ccm status scaffold NAME` knows no source: show the target.
		return targetStatus(h, req.Name)
	}
	s, errs := parseSpec(req.Name, req.Properties, req.Provider)
	if len(errs) > 0 {
		resp.Error = "invalid properties: " + strings.Join(errs, "; ")
		return resp
	}
	p, err := survey(h, s, req.WorkingDir, false)
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	resp.FinalEnsure = p.observed()
	resp.State = p.state(s)
	return resp
}

// Apply renders, compares, and (unless noop) writes what changed, purges,
// or removes the managed files, then checks the target again.
func (*scaffoldType) Apply(h sdk.Host, req abi.Request) abi.Result {
	res := abi.Result{Provider: providerChoria}
	s, errs := parseSpec(req.Name, req.Properties, req.Provider)
	if len(errs) > 0 {
		res.Error = "invalid properties: " + strings.Join(errs, "; ")
		return res
	}
	p, err := survey(h, s, req.WorkingDir, !req.Noop && s.ensure == ensurePresent)
	var missing *missingSource
	if req.Noop && req.AfterChanges && errors.As(err, &missing) {
		// An earlier change (an archive, a file) may create the source:
		// no evidence that the real run fails (docs/decisions.md, honest noop).
		res.Changed = true
		res.NoopMessage = fmt.Sprintf("Would have rendered %s into %s (the source does not exist yet; an earlier change may create it)", missing.src, s.target)
		return res
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.FinalEnsure = p.observed()
	if !req.NoState {
		res.State = p.state(s)
	}
	work := p.work(s)
	if len(work) == 0 {
		return res
	}
	res.Messages = work
	if req.Diff && s.ensure == ensurePresent {
		res.Diff = p.diff(h, s, req.HideDiff)
	}
	if req.Noop {
		res.Changed = true
		verb := "changed"
		if s.ensure == ensureAbsent {
			verb = "removed"
		}
		res.NoopMessage = fmt.Sprintf("Would have %s %d scaffold files", verb, p.affected(s))
		if p.unposted > 0 && s.ensure == ensurePresent {
			res.Messages = append(res.Messages, fmt.Sprintf("%d post-processed files compared before post-processing (post commands do not run in noop)", p.unposted))
		}
		return res
	}
	if s.ensure == ensureAbsent {
		err = p.remove(h, s)
	} else {
		err = p.converge(h, s)
	}
	res.Changed = true
	if err != nil {
		res.Changed = false
		res.Error = err.Error()
		return res
	}
	// Read the target back: the files written, nothing left to purge.
	after, err := p.recheck(h, s)
	if err != nil {
		res.Error = "failed to reach desired state: " + err.Error()
		return res
	}
	res.FinalEnsure = after.observed()
	if !req.NoState {
		res.State = after.state(s)
	}
	if left := after.work(s); len(left) > 0 {
		res.Error = "failed to reach desired state: " + strings.Join(left, "; ")
	}
	return res
}

// state is CCM's scaffold metadata: absolute paths of changed, purged and
// stable files.
func (p *plan) state(s spec) map[string]any {
	abs := func(rels []string) []any {
		out := make([]any, 0, len(rels))
		for _, r := range rels {
			out = append(out, path.Join(s.target, r))
		}
		return out
	}
	var changed, stable, purged []string
	for _, c := range p.changes {
		switch c.action {
		case actAdd, actUpdate:
			if s.ensure == ensureAbsent {
				if c.action == actUpdate {
					changed = append(changed, c.rel)
				}
				continue
			}
			changed = append(changed, c.rel)
		case actEqual:
			stable = append(stable, c.rel)
		}
	}
	purged = append(purged, p.extra...)
	sort.Strings(changed)
	sort.Strings(stable)
	return map[string]any{
		"protocol": stateProtocol, "type": typeName, "name": s.target, "ensure": p.observed(),
		"metadata": map[string]any{
			"name": s.target, "provider": providerChoria, "engine": s.engine, "target_exists": p.targetExists,
			"changed": abs(changed), "stable": abs(stable), "purged": abs(purged),
		},
	}
}

// targetStatus describes the target directory alone: whether it exists
// and the files in it (symlinks listed, not followed).
func targetStatus(h sdk.Host, name string) abi.StatusResponse {
	resp := abi.StatusResponse{Provider: providerChoria}
	s := spec{target: name, ensure: ensurePresent}
	if _, errs := parseSpec(name, map[string]any{"source": "-"}, ""); len(errs) > 0 {
		resp.Error = strings.Join(errs, "; ")
		return resp
	}
	p := &plan{seen: map[string]string{}}
	st, err := h.Stat(abi.FSStatRequest{Path: name})
	if err != nil {
		resp.Error = fmt.Sprintf("reading target %s: %v", name, err)
		return resp
	}
	p.targetExists = st.Exists && st.Type == "directory"
	files := []any{}
	if p.targetExists {
		if err := p.findExtra(h, s, "", map[string]bool{}); err != nil {
			resp.Error = err.Error()
			return resp
		}
		for _, f := range p.extra {
			files = append(files, path.Join(name, f))
		}
	}
	resp.FinalEnsure = p.observed()
	resp.State = map[string]any{
		"protocol": stateProtocol, "type": typeName, "name": name, "ensure": p.observed(),
		"metadata": map[string]any{"name": name, "provider": providerChoria, "target_exists": p.targetExists, "files": files},
	}
	return resp
}

var _ sdk.Resource = (*scaffoldType)(nil)
