// Command ccm converges a host from YAML manifests whose resource types run
// as WebAssembly plugins in a capability sandbox.
//
// This package only parses flags, wires the engine to the plugin host, prints
// and maps outcomes to exit statuses; all behaviour lives in runtime/ and host/.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Exit statuses (docs/apply.md, "Exit status").
const (
	exitOK      = 0
	exitFailed  = 1 // the run completed with failed resources; under --detailed-exitcodes also "nothing ran"
	exitUsage   = 2 // usage error or unloadable manifest; nothing changed
	exitChanges = 2 // --detailed-exitcodes: changes, no failures
)

// exitError carries an exit status out of a command.
type exitError struct {
	code int
	err  error // nil = nothing more to print
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func main() {
	stop := startProfile()
	code := run(os.Args[1:])
	stop()
	os.Exit(code)
}

func run(args []string) int {
	// SIGINT and SIGTERM cancel the command's context (signals.go); the
	// exit status is then 128+signal whatever the command made of it.
	ctx, sigs := watchSignals(context.Background(), os.Stderr)
	defer sigs.stop()
	cmd := newRootCommand()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	code := exitOK
	var ee *exitError
	if errors.As(err, &ee) {
		code, err = ee.code, ee.err
	} else if err != nil {
		code = exitUsage
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ccm: error: %s\n", terminalSafe(err.Error()))
		// Under --detailed-exitcodes 2 means "changes": a run that never
		// started (usage error, unloadable manifest, bad --data) is a
		// failed run, 1, as in Puppet.
		if code == exitUsage && detailedExitCodes(args) {
			code = exitFailed
		}
	}
	if intr := sigs.received(); intr != nil {
		return intr.code()
	}
	return code
}

// detailedExitCodes reports whether args ask for --detailed-exitcodes. It
// reads args rather than the parsed flag because a flag error stops the
// parse before the flag is set.
func detailedExitCodes(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if v, ok := strings.CutPrefix(a, "--detailed-exitcodes"); ok {
			switch v {
			case "", "=true", "=1", "=t", "=T", "=TRUE", "=True":
				return true
			}
		}
	}
	return false
}
