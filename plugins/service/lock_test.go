package main

import "testing"

// TestRunLock: unit changes run under the host's "service" run lock
// (host/lock.go), so two ccm runs never interleave their systemctl verbs.
func TestRunLock(t *testing.T) {
	if got := (&serviceType{}).Info().Lock; got != "service" {
		t.Fatalf("Info().Lock = %q, want service", got)
	}
}
