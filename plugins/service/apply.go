package main

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// action is one systemctl mutation the decision table chose.
type action struct {
	verb string // restart, start, stop, enable, disable
	noop string // what noop reports instead
}

// plan is the decision table of docs/service.md: the running axis first,
// then the enable axis, independently.
func plan(s spec, cur unitState, refresh bool) []action {
	var acts []action
	switch {
	case s.ensure == ensureRunning && cur.running && refresh:
		acts = append(acts, action{"restart", "Would have restarted via subscribe"})
	case s.ensure == ensureRunning && !cur.running:
		// A pending refresh is satisfied by the start.
		acts = append(acts, action{"start", "Would have started"})
	case s.ensure == ensureStopped && cur.running:
		// A stopped service ignores its subscriptions.
		acts = append(acts, action{"stop", "Would have stopped"})
	}
	switch {
	case s.enable == nil || *s.enable == cur.enabled:
	case *s.enable:
		acts = append(acts, action{"enable", "Would have enabled"})
	default:
		acts = append(acts, action{"disable", "Would have disabled"})
	}
	return acts
}

// Apply reads the unit, plans, acts unless noop, re-reads and verifies.
func (t *serviceType) Apply(h sdk.Host, req abi.Request) abi.Result {
	s, errs := parse(req.Name, req.Properties, req.Provider)
	res := abi.Result{Provider: s.provider}
	if len(errs) > 0 {
		res.Error = "invalid properties: " + strings.Join(errs, "; ")
		return res
	}
	cur, err := readState(h, s.name)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.FinalEnsure, res.State = cur.ensure(), stateDoc(s, cur)

	acts := plan(s, cur, req.Refresh)
	if len(acts) == 0 {
		return res
	}
	restarts := acts[0].verb == "restart"
	if req.Noop {
		msgs := make([]string, len(acts))
		for i, a := range acts {
			msgs[i] = a.noop
		}
		res.Changed, res.Refreshed, res.NoopMessage = true, restarts, strings.Join(msgs, ", ")
		return res
	}

	if err := t.reload(h, &res); err != nil {
		res.Error = err.Error()
		return res
	}
	for _, a := range acts {
		lines, err := mutate(h, a.verb, s.name)
		if err != nil {
			// Changed reports only a completed run, as exec does; an
			// earlier completed verb of this resource is in Messages.
			res.Error, res.Messages = err.Error(), append(res.Messages, lines...)
			return res
		}
		res.Messages = append(res.Messages, "ran systemctl "+a.verb+" "+s.name)
	}
	res.Changed, res.Refreshed = true, restarts

	after, err := readState(h, s.name)
	if err != nil {
		res.Error = "re-reading state after the change: " + err.Error()
		return res
	}
	res.FinalEnsure, res.State = after.ensure(), stateDoc(s, after)
	if why := unconverged(s, after); why != "" {
		res.Error = "failed to reach desired state: " + why
	}
	return res
}

// reload runs systemctl daemon-reload once per plugin instance, so edited
// unit files are seen; a failed reload stays pending for the next resource.
func (t *serviceType) reload(h sdk.Host, res *abi.Result) error {
	if t.reloaded {
		return nil
	}
	lines, err := mutate(h, "daemon-reload", "")
	if err != nil {
		res.Messages = append(res.Messages, lines...)
		return fmt.Errorf("reloading systemd before changing the unit: %w", err)
	}
	t.reloaded = true
	return nil
}

// unconverged says how the unit differs from the spec, or "".
func unconverged(s spec, u unitState) string {
	var why []string
	if u.ensure() != s.ensure {
		why = append(why, fmt.Sprintf("unit %s is %s, want %s", s.name, u.ensure(), s.ensure))
	}
	if s.enable != nil && *s.enable != u.enabled {
		why = append(why, fmt.Sprintf("unit %s has enabled %v, want %v", s.name, u.enabled, *s.enable))
	}
	return strings.Join(why, "; ")
}
