// Command ccm converges a host from YAML manifests whose resource types run
// as WebAssembly plugins in a capability sandbox.
//
// This package only parses flags, wires the engine to the plugin host, prints
// and maps outcomes to exit statuses; all behaviour lives in runtime/ and host/.
package main

import (
	"errors"
	"fmt"
	"os"
)

// Exit statuses (cli.md §1).
const (
	exitOK      = 0
	exitFailed  = 1 // the run completed with failed resources
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
	cmd := newRootCommand()
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(os.Stderr, "ccm: error: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(os.Stderr, "ccm: error: %v\n", err)
	return exitUsage
}
