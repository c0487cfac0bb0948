package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// profileEnv lists the variables that make a process write a profile or
// trace to a FILE: a process ccm starts itself (the background compile)
// must not inherit them, or it would overwrite this run's.
var profileEnv = []string{"CCM_CPUPROFILE", "CCM_MEMPROFILE", "CCM_TRACE"}

// CCM_CPUPROFILE=FILE writes a CPU profile of the whole process, for
// performance work (docs/performance.md). It is read before flags so that
// flag parsing and plugin loading are profiled too. CCM_MEMPROFILE=FILE
// writes a heap profile when the run ends (what is live then, and every
// allocation made).
func startProfile() (stop func()) {
	cpu := startCPUProfile()
	tr := startTrace()
	path := os.Getenv("CCM_MEMPROFILE")
	if path == "" {
		return func() {
			tr()
			cpu()
		}
	}
	return func() {
		tr()
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

// startTrace writes a Go execution trace of the whole process to
// CCM_TRACE=FILE, to see what runs on which core and when (`go tool trace
// FILE`): the plugin load beside the manifest's parse, collections, host
// calls.
func startTrace() (stop func()) {
	path := os.Getenv("CCM_TRACE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ccm: warning: CCM_TRACE: %v\n", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintf(os.Stderr, "ccm: warning: CCM_TRACE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}
