package host

import (
	"context"
	"sync"
	"time"
)

// deadline is a plugin call's wall-time limit that a ccm_exec can move: the
// time an exec with its own timeout spends running is added back, so a long
// command is bounded by its own timeout and the call's limit keeps bounding
// only the guest itself (see Limits.CallTimeout).
type deadline struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	at    time.Time
	timer *time.Timer
	// moved, when set, learns each new deadline (a built-in's backstop).
	moved func(at time.Time)
}

// limitError is the cause of a call's context when one of the Limits ended
// it; it names the limit so the resource's error says which one to raise.
type limitError struct {
	limit string
	value string
}

func (e *limitError) Error() string {
	return "exceeded the " + e.limit + " limit of " + e.value
}

func (e *limitError) Is(target error) bool { return target == ErrLimit }

func newDeadline(parent context.Context, d time.Duration) *deadline {
	ctx, cancel := context.WithCancelCause(parent)
	dl := &deadline{ctx: ctx, cancel: cancel, at: time.Now().Add(d)}
	cause := &limitError{limit: "call_timeout", value: d.String()}
	dl.timer = time.AfterFunc(d, func() { cancel(cause) })
	return dl
}

// extend moves the deadline by delta (negative to take time back). A
// deadline that already fired stays fired.
func (d *deadline) extend(delta time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = d.at.Add(delta)
	d.timer.Reset(time.Until(d.at))
	if d.moved != nil {
		d.moved(d.at)
	}
}

// stop releases the timer and the context.
func (d *deadline) stop() {
	d.timer.Stop()
	d.cancel(context.Canceled)
}
