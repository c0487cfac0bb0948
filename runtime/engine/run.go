package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// manifestOutcome counts what one manifest's run (children included) did.
type manifestOutcome struct {
	total, failed, changed int
}

// runPlan runs every resource of p in declaration order. It returns the
// counts of the events recorded meanwhile (children's included).
func (e *Engine) runPlan(ctx context.Context, s scope, p *plan) manifestOutcome {
	first := e.session.Len()
	if p.pre != "" {
		e.report.Message(p.pre)
	}
	e.report.ManifestStart(e.display(p.file), len(p.resources), s.depth)

	var stoppedBy string
	for i := 0; i < len(p.resources); {
		r := p.resources[i]
		if stoppedBy == "" && ctx.Err() != nil {
			// A signal (or the caller) ended the run: what is left is
			// reported, not started.
			stoppedBy = interruptedBy(ctx)
		}
		if stoppedBy != "" {
			e.record(s, e.notRun(s, p, r, stoppedBy))
			i++
			continue
		}
		var evs []*session.Event
		if batch := e.batch(s, p, i); len(batch) > 1 {
			evs = e.runBatch(ctx, s, p, batch)
		} else {
			evs = []*session.Event{e.runResource(ctx, s, p, r)}
		}
		i += len(evs)
		for _, ev := range evs {
			if ev.Failed && p.failOnError && !s.healthCheckOnly {
				stoppedBy = "fail_on_error is set and " + ev.Display() + " failed"
				break
			}
		}
	}

	out := manifestOutcome{}
	for _, ev := range e.session.Events()[first:] {
		out.total++
		if ev.Failed {
			out.failed++
		} else if ev.Changed {
			out.changed++
		}
	}
	if out.failed == 0 && p.post != "" {
		e.report.Message(p.post)
	}
	return out
}

// notRun is the event of a resource after fail_on_error or an interruption
// stopped its manifest; why completes "not applied: ".
func (e *Engine) notRun(s scope, p *plan, r *resource, stoppedBy string) *session.Event {
	ev := e.newEvent(s, p, r)
	ev.Skipped = true
	ev.Messages = append(ev.Messages, "not applied: "+stoppedBy)
	return ev
}

// runResource takes one resource through the flow of docs/manifests.md and
// records its event. It never panics out: a panic below becomes a failed
// event for this resource.
func (e *Engine) runResource(ctx context.Context, s scope, p *plan, r *resource) (ev *session.Event) {
	start := time.Now()
	ev = e.newEvent(s, p, r)
	defer func() {
		if v := recover(); v != nil {
			ev.Fail(fmt.Sprintf("internal error: %v", v))
		}
		ev.Duration = time.Since(start)
		e.register(ctx, s, p, r, ev)
		e.record(s, ev)
	}()

	req, done := e.prepare(ctx, s, p, r, ev)
	if done {
		return ev
	}

	if r.typ == applyType {
		e.runApply(ctx, s, p, r, ev)
		// health_checks is a common property: an apply's own checks run
		// after its child, like any resource's after it was applied.
		if !ev.Failed {
			e.healthChecks(ctx, s, p, r, ev)
		}
		return ev
	}

	if s.healthCheckOnly {
		ev.HealthCheckOnly = true
		ev.NotChecked = len(r.src.HealthChecks) == 0
		e.healthChecks(ctx, s, p, r, ev)
		return ev
	}

	e.step(r.ref(), stepText(s, r))
	res, err := e.opts.Plugins.Apply(ctx, e.caller(s, p, r), req)
	e.step("", "")
	if err != nil {
		ev.Fail(err.Error())
		return ev
	}
	applyResult(ev, res)
	if !ev.Failed {
		e.healthChecks(ctx, s, p, r, ev)
	}
	return ev
}

// stepText says what a plugin apply of r is doing, for the status line.
func stepText(s scope, r *resource) string {
	if s.noop {
		return "checking what would change"
	}
	if r.ensure != "" {
		return "applying ensure " + r.ensure
	}
	return "applying"
}

// prepare runs the gates of a resource before its plugin is called:
// control, deferred templates, require and subscribe. done reports that ev
// is already final (skipped or failed); otherwise req is ready to send.
func (e *Engine) prepare(ctx context.Context, s scope, p *plan, r *resource, ev *session.Event) (req abi.Request, done bool) {
	managed, err := e.managed(p, r)
	if err != nil {
		ev.Fail(p.line(r) + ": " + err.Error())
		return req, true
	}
	if !managed {
		ev.Skipped = true
		return req, true
	}

	// A handle goes with one request at most (the plugin forgets it then).
	props, handle := r.props, r.handle
	r.handle = 0
	if r.pending {
		if props, handle, err = e.expandDeferred(ctx, s, p, r); err != nil {
			ev.Fail(err.Error())
			return req, true
		}
	}
	ev.Properties = props

	unmet, err := e.unmet(r.src.Require)
	if err != nil {
		ev.Fail(err.Error())
		return req, true
	}
	if len(unmet) > 0 {
		ev.Skipped = true
		ev.UnmetRequirements = unmet
		return req, true
	}

	refresh, err := e.fired(r.src.Subscribe, s.noop)
	if err != nil {
		ev.Fail(err.Error())
		return req, true
	}
	return abi.Request{
		Type:       r.typ,
		Name:       r.name,
		Properties: props,
		Provider:   r.provider,
		// Noop and HealthCheckOnly are not set here: the host derives
		// them from the caller's Mode (trust.Mode.Request).
		Refresh:    refresh,
		WorkingDir: s.dir,
		NoState:    e.opts.NoState,
		Diff:       e.opts.Diff != DiffAuto || s.noop,
		HideDiff:   e.opts.Diff == DiffNever,
		// In noop, a plugin predicts failures from the host's state until
		// a resource of another type would have changed it.
		AfterChanges: s.noop && e.changedOtherThan(r.typ),
		// What the plugin kept when it validated exactly props; the host
		// sends it instead of props only to the instance that kept it.
		Handle: handle,
	}, false
}

// changedOtherThan reports whether a noop resource of a type other than typ
// would have changed the host.
func (e *Engine) changedOtherThan(typ string) bool {
	for t := range e.noopChanged {
		if t != typ {
			return true
		}
	}
	return false
}

// applyResult copies a plugin's Result into the event.
func applyResult(ev *session.Event, res abi.Result) {
	ev.Duration = time.Duration(res.DurationNS)
	if res.Provider != "" {
		ev.Provider = res.Provider
	}
	ev.FinalEnsure = res.FinalEnsure
	ev.Changed = res.Changed
	ev.Refreshed = res.Refreshed
	ev.NoopMessage = res.NoopMessage
	ev.Status = res.State
	ev.Messages = append(ev.Messages, res.Messages...)
	ev.Diff = res.Diff
	if res.Error != "" {
		ev.Fail(res.Error)
	}
}

func (e *Engine) newEvent(s scope, p *plan, r *resource) *session.Event {
	ev := session.NewEvent(r.typ, r.name, r.alias)
	ev.RequestedEnsure = r.ensure
	ev.Noop = s.noop
	ev.Manifest = e.display(p.file)
	switch {
	case r.typ == applyType:
		ev.Provider = "ccmmanifest"
	case r.provider != "":
		ev.Provider = r.provider
	case r.info != nil && len(r.info.Providers) > 0:
		ev.Provider = r.info.Providers[0]
	}
	return ev
}

func (e *Engine) record(s scope, ev *session.Event) {
	if ev.Noop && ev.Changed && !ev.Failed {
		if e.noopChanged == nil {
			e.noopChanged = map[string]bool{}
		}
		e.noopChanged[ev.Type] = true
	}
	e.session.Record(ev)
	e.report.Event(ev, s.depth)
}

// caller is who the plugin call acts for.
func (e *Engine) caller(s scope, p *plan, r *resource) trust.Caller {
	return trust.Caller{
		Resource: r.ref(),
		Plugin:   r.plugin,
		Manifest: p.file,
		Grants:   s.grants,
		Limits:   s.limits,
		Mode:     s.mode(),
		Lookup:   p.x.Lookup,
		Log: func(level, message string) {
			e.report.Log(r.ref(), level, message)
		},
	}
}

// managed evaluates control.if and control.unless (docs/manifests.md).
func (e *Engine) managed(p *plan, r *resource) (bool, error) {
	c := r.src.Control
	if c.If != "" {
		ok, err := p.x.Bool(c.If)
		if err != nil {
			return false, fmt.Errorf("control.if: %w", err)
		}
		if !ok {
			return false, nil
		}
	}
	if c.Unless != "" {
		ok, err := p.x.Bool(c.Unless)
		if err != nil {
			return false, fmt.Errorf("control.unless: %w", err)
		}
		if ok {
			return false, nil
		}
	}
	return true, nil
}

// expandDeferred renders the deferred fields and validates the result. It
// returns the properties and the validation's handle to them (0: none).
func (e *Engine) expandDeferred(ctx context.Context, s scope, p *plan, r *resource) (map[string]any, int64, error) {
	props := maps.Clone(r.props)
	for _, k := range r.info.Deferred {
		v, ok := props[k]
		if !ok {
			continue
		}
		out, err := p.x.Expand(v)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %s: %w", p.line(r), k, err)
		}
		props[k] = out
	}
	if problems := e.schemaProblems(r, props); len(problems) > 0 {
		return nil, 0, fmt.Errorf("invalid after template expansion: %s", join(problems))
	}
	resps, err := e.opts.Plugins.Validate(ctx, s.pluginCaller(), r.plugin, []abi.ValidateRequest{{Properties: props, Provider: r.provider}})
	if err != nil {
		return nil, 0, fmt.Errorf("validating: %w", err)
	}
	if len(resps) == 1 && len(resps[0].Errors) > 0 {
		return nil, 0, fmt.Errorf("invalid after template expansion: %s", join(resps[0].Errors))
	}
	var handle int64
	if len(resps) == 1 {
		handle = resps[0].Handle
	}
	return props, handle, nil
}

// unmet returns the requirements that block a resource: their latest event
// failed or was skipped for unmet requirements. A requirement with no event
// fails the resource (docs/manifests.md).
func (e *Engine) unmet(refs []string) ([]string, error) {
	var out []string
	for _, ref := range refs {
		ev, ok := e.session.Latest(ref)
		if !ok {
			return nil, fmt.Errorf("unknown requirement %s: no resource of that name has run in this session", ref)
		}
		if ev.Failed || len(ev.UnmetRequirements) > 0 {
			out = append(out, ref)
		}
	}
	return out, nil
}

// fired reports whether any subscribed resource changed. A noop event only
// would have changed: it fires a subscriber that is itself in noop (which
// then reports the refresh it would do), never a real one. Modes differ
// within a run when an apply resource sets noop on its child.
func (e *Engine) fired(refs []string, noop bool) (bool, error) {
	fired := false
	for _, ref := range refs {
		ev, ok := e.session.Latest(ref)
		if !ok {
			return false, fmt.Errorf("unknown subscription %s: no resource of that name has run in this session", ref)
		}
		if ev.Changed && !ev.Failed && (noop || !ev.Noop) {
			fired = true
		}
	}
	return fired, nil
}

func join(errs []string) string { return strings.Join(errs, "; ") }
