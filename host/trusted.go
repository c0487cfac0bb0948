package host

import (
	"context"
	"fmt"
	"os"
	"time"
)

// The built-ins (WithBuiltins) are modules this project compiles and embeds
// in ccm. They run without wazero's WithCloseOnContextDone, whose check makes
// wazero v1.12's compiled code leave for Go at every loop header: about half
// of a stable apply's time with a Go guest (docs/performance.md). What still
// bounds a built-in:
//
//   - every host call checks the call's context first (serveHostCall): a
//     built-in looping through host calls, or waiting in one, is stopped at
//     its deadline or on a signal, as any plugin is;
//   - a built-in stuck in a pure guest loop cannot be interrupted; that is a
//     bug in ccm, not an attack, so a watchdog (watch) ends the process with
//     a bug report stuckGrace after the call's context ended, instead of
//     letting the run hang. wazero's compiled code cannot be preempted, so
//     the watchdog goroutine may never run (GOMAXPROCS=1, or a garbage
//     collection waiting to stop the world); an OS timer (backstop) then
//     kills the process (SIGKILL) backstopAfter later.
//
// Every other module (WithFS, WithModules, plugin directories, registered
// files) keeps the check and is stopped at its deadline wherever it loops.
// Both kinds share the compilation cache: wazero's key for compiled code is
// the module's bytes plus whether the check is compiled in (AssignModuleID),
// so a third-party module with a built-in's bytes still gets checked code
// (TestThirdPartyLoopInterruptedAfterBuiltin pins that).

// defaultStuckGrace is how long a built-in's call may run past the end of its
// context before the watchdog ends the process.
const defaultStuckGrace = 10 * time.Second

// defaultBackstopAfter is how long after the Go watchdog's turn the
// backstop (backstop_linux.go) aborts the process, for when the watchdog
// cannot run.
const defaultBackstopAfter = 5 * time.Second

// watch starts the watchdog of one built-in call whose deadline is dl; the
// returned function ends it and must be called when the call returns.
func (h *Host) watch(dl *deadline, typ, export string) func() {
	done := make(chan struct{})
	stuck, grace, backstopAfter := h.stuck, h.stuckGrace, h.backstopAfter
	ctx := dl.ctx
	bs := newBackstop()
	dl.mu.Lock()
	bs.arm(time.Until(dl.at) + grace + backstopAfter)
	dl.moved = func(at time.Time) { bs.arm(time.Until(at) + grace + backstopAfter) }
	dl.mu.Unlock()
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		// Ended early (a signal, a limit): the backstop counts from now.
		bs.arm(grace + backstopAfter)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			stuck(typ, export, grace, context.Cause(ctx))
		}
	}()
	return func() {
		close(done)
		dl.mu.Lock()
		dl.moved = nil
		dl.mu.Unlock()
		bs.close()
	}
}

// exitStuckCode is the exit status of a run ended by the watchdog
// (EX_SOFTWARE: an internal error).
const exitStuckCode = 70

// exitStuck is the watchdog's action: a built-in that does not return is a
// bug in ccm, and the process cannot stop it any other way. Files are
// written atomically, so no partial file is left behind.
func exitStuck(typ, export string, grace time.Duration, cause error) {
	fmt.Fprintf(os.Stderr, "ccm: BUG: the built-in plugin for type %q is still running %s %s after its call ended (%v); built-ins run without the per-loop termination check (docs/performance.md), so ccm exits; please report this with the manifest\n",
		typ, export, grace, cause)
	os.Exit(exitStuckCode)
}
