package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CCM_CPUPROFILE=FILE writes a CPU profile of the whole process, for
// performance work (docs/performance.md). It is read before flags so that
// flag parsing and plugin loading are profiled too. CCM_MEMPROFILE=FILE
// writes a heap profile when the run ends (what is live then, and every
// allocation made).
func startProfile() (stop func()) {
	cpu := startCPUProfile()
	path := os.Getenv("CCM_MEMPROFILE")
	if path == "" {
		return cpu
	}
	return func() {
		cpu()
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ccm: warning: CCM_MEMPROFILE: %v\n", err)
		}
	}
}

func startCPUProfile() (stop func()) {
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
