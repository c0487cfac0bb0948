package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// backstop is how long ccm keeps going after the first SIGINT or SIGTERM
// before it exits regardless. A plugin call, an exec and a child manifest
// stop as soon as the run's context ends; what does not (host-side template
// evaluation, a read blocked in the kernel) is cut short here, without
// deferred cleanup.
const backstop = 3 * time.Second

// interrupted is the cause of the run's context after a signal: its
// message completes "the run was ..." and "plugin ...: ...".
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// code is the shell's exit status of a process a signal ended: 128 + signal
// (130 for SIGINT, 143 for SIGTERM).
func (e *interrupted) code() int { return 128 + int(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// signals turns SIGINT and SIGTERM into the end of the run. The first one
// cancels the context (cause *interrupted): the current resource's plugin
// call or command is stopped, the resources after it are not started, and
// the command reports and exits with 128+signal. A second signal exits at
// once; so does the backstop, if the run is still going after it.
type signals struct {
	ch     chan os.Signal
	stderr io.Writer
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu    sync.Mutex
	first *interrupted
}

// watchSignals starts watching; stop ends it (call it when the command has
// returned, so a late signal gets the default behaviour).
func watchSignals(parent context.Context, stderr io.Writer) (context.Context, *signals) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &signals{ch: make(chan os.Signal, 2), stderr: stderr, cancel: cancel, done: make(chan struct{})}
	signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM)
	go s.loop()
	return ctx, s
}

func (s *signals) loop() {
	for {
		select {
		case <-s.done:
			return
		case got := <-s.ch:
			sig, _ := got.(syscall.Signal)
			s.mu.Lock()
			first := s.first
			if first == nil {
				s.first = &interrupted{sig: sig}
			}
			s.mu.Unlock()
			if first != nil {
				fmt.Fprintf(s.stderr, "ccm: %s again: exiting now\n", signalName(sig))
				os.Exit(first.code())
			}
			fmt.Fprintf(s.stderr, "ccm: %s: stopping the run at the current resource; a second signal exits at once\n", signalName(sig))
			s.cancel(&interrupted{sig: sig})
			time.AfterFunc(backstop, func() {
				fmt.Fprintf(s.stderr, "ccm: still running %s after %s; exiting now, without cleanup\n", backstop, signalName(sig))
				os.Exit(128 + int(sig))
			})
		}
	}
}

// received is the first signal's cause, or nil.
func (s *signals) received() *interrupted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// stop restores the default handling of the signals.
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
}
