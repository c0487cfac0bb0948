package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// maxBatch bounds how many resources share one plugin call, so a failure
// or a timeout costs at most that many and progress is reported often.
const maxBatch = 256

// batch returns the run of resources starting at i that can share one
// ccm_apply_batch call: same plugin type, one whose plugin invites batching
// (PluginInfo.Batch: its applies are cheap), apply mode (noop and
// health-check-only runs go one by one, so read-only probe rules see each
// resource's own properties), no health checks (they must run right after
// their resource, before the next one), and no require or subscribe on a
// member of the run (its event does not exist until the call returns).
// Such resources do not observe each other, so applying them in one call,
// in order, is the same as applying them one by one.
func (e *Engine) batch(s scope, p *plan, i int) []*resource {
	first := p.resources[i]
	if !batchable(s, first) {
		return nil
	}
	members := map[string]bool{}
	add := func(r *resource) {
		members[r.ref()] = true
		if r.alias != "" {
			members[r.typ+"#"+r.alias] = true
		}
	}
	add(first)
	j := i + 1
	for ; j < len(p.resources) && j-i < maxBatch; j++ {
		r := p.resources[j]
		if r.typ != first.typ || !batchable(s, r) || refersTo(r, members) {
			break
		}
		add(r)
	}
	return p.resources[i:j]
}

func batchable(s scope, r *resource) bool {
	return s.mode() == trust.ModeApply && r.info != nil && r.info.Batch && len(r.src.HealthChecks) == 0 && len(r.src.RegisterWhenStable) == 0
}

func refersTo(r *resource, members map[string]bool) bool {
	for _, refs := range [][]string{r.src.Require, r.src.Subscribe} {
		for _, ref := range refs {
			if members[ref] {
				return true
			}
		}
	}
	return false
}

// runBatch prepares each resource of rs in order, applies the ready ones in
// one plugin call, and records every event in declaration order. With
// fail_on_error, preparation stops at the first resource that fails, so
// nothing after it reaches the plugin; the caller then records the rest as
// not run. It returns the recorded events.
func (e *Engine) runBatch(ctx context.Context, s scope, p *plan, rs []*resource) (evs []*session.Event) {
	start := time.Now()
	type item struct {
		ev    *session.Event
		ready bool
	}
	items := make([]item, 0, len(rs))
	var (
		callers []trust.Caller
		reqs    []abi.Request
	)
	defer func() {
		if v := recover(); v != nil {
			for _, it := range items {
				if it.ready {
					it.ev.Fail(fmt.Sprintf("internal error: %v", v))
				}
			}
		}
		// The plugin times each resource of a batch; the share of the
		// whole call is the fallback for one that does not.
		per := time.Since(start) / time.Duration(max(len(items), 1))
		for _, it := range items {
			if it.ev.Duration == 0 {
				it.ev.Duration = per
			}
			e.record(s, it.ev)
			evs = append(evs, it.ev)
		}
	}()

	for _, r := range rs {
		ev := e.newEvent(s, p, r)
		req, done := e.prepare(ctx, s, p, r, ev)
		items = append(items, item{ev: ev, ready: !done})
		if !done {
			callers = append(callers, e.caller(s, p, r))
			reqs = append(reqs, req)
		}
		if ev.Failed && p.failOnError {
			break
		}
	}
	if len(reqs) == 0 {
		return
	}

	label := callers[0].Resource
	if len(callers) > 1 {
		label += fmt.Sprintf(" and %d more", len(callers)-1)
	}
	e.step(label, stepText(s, rs[0]))
	results, err := e.opts.Plugins.ApplyBatch(ctx, callers, reqs, p.failOnError)
	e.step("", "")
	n := 0
	var failed *session.Event
	for _, it := range items {
		if !it.ready {
			continue
		}
		switch {
		case n < len(results):
			applyResult(it.ev, results[n])
		case err != nil:
			it.ev.Fail(err.Error())
		case failed != nil:
			// fail_on_error stopped the batch at an earlier failure.
			it.ev.Skipped = true
			it.ev.Messages = append(it.ev.Messages, "not applied: fail_on_error is set and "+failed.Display()+" failed")
		default:
			it.ev.Fail(fmt.Sprintf("BUG: the plugin returned %d results for %d resources", len(results), len(reqs)))
		}
		if it.ev.Failed && failed == nil {
			failed = it.ev
		}
		n++
	}
	return
}

// forgetHandles lets the host free what plugins kept for validated
// resources this run never applied (skipped by control or an unmet
// requirement, stopped by fail_on_error, run in health-check-only mode):
// a host that outlives the run (ccm agent) would otherwise keep them.
func (e *Engine) forgetHandles(ctx context.Context) {
	if f, ok := e.opts.Plugins.(hostapi.HandleForgetter); ok {
		f.ForgetHandles(context.WithoutCancel(ctx))
	}
}
