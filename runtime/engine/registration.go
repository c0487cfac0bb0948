package engine

import (
	"context"
	"fmt"

	"github.com/ccm-dev/ccm/runtime/session"
)

// register publishes r's register_when_stable entries once its event is
// final (docs/registration.md), CCM's gate: not in noop, the resource did
// not fail, and every health check returned OK (a resource without checks
// passes). Unlike CCM a skipped resource (control, unmet requirements, an
// interrupted run) does not register: nothing made it stable. A failed
// publish fails the resource; with no destination configured the event
// says the entries were not published.
func (e *Engine) register(ctx context.Context, s scope, p *plan, r *resource, ev *session.Event) {
	regs := r.src.RegisterWhenStable
	if len(regs) == 0 || ev.Failed || ev.Skipped || ctx.Err() != nil {
		return
	}
	for _, hc := range ev.HealthCheck {
		if hc.Status != session.HealthOK {
			ev.Messages = append(ev.Messages, fmt.Sprintf("register_when_stable: not published: health check %s is %s", hc.Name, hc.Status))
			return
		}
	}
	if ev.Noop {
		ev.Messages = append(ev.Messages, fmt.Sprintf("register_when_stable: would publish %d registration entries (noop)", len(regs)))
		return
	}
	if e.opts.Register == nil {
		ev.Messages = append(ev.Messages, fmt.Sprintf("register_when_stable: %d registration entries not published: no registration destination is configured (the agent's registration: jetstream or nats, or ccm apply --register jetstream|nats)", len(regs)))
		return
	}
	for i, raw := range regs {
		v, err := p.x.Expand(raw)
		if err != nil {
			ev.Fail(fmt.Sprintf("%s: register_when_stable[%d]: %v", p.line(r), i, err))
			return
		}
		entry, _ := v.(map[string]any)
		desc, err := e.opts.Register(ctx, entry, s.grants)
		if err != nil {
			ev.Fail(fmt.Sprintf("%s: register_when_stable[%d]: %v", p.line(r), i, err))
			return
		}
		ev.Messages = append(ev.Messages, "registered "+desc)
	}
}

// registrations is templates' registrations() in scope s
// (Options.Registrations).
func (e *Engine) registrations(ctx context.Context, s scope) func(cluster, protocol, service, address string) (any, error) {
	if e.opts.Registrations == nil {
		return nil
	}
	return func(cluster, protocol, service, address string) (any, error) {
		return e.opts.Registrations(ctx, cluster, protocol, service, address, s.grants)
	}
}
