package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CCM_CPUPROFILE=FILE writes a CPU profile of the whole process, for
// performance work (docs/performance.md). It is read before flags so that
// flag parsing and plugin loading are profiled too.
func startProfile() (stop func()) {
	path := os.Getenv("CCM_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ccm: warning: CCM_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "ccm: warning: CCM_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
