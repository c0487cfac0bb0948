package main

import "testing"

// TestRunLock: package changes run under the host's "package" run lock
// (host/lock.go), so concurrent ccm runs take turns at dpkg and rpm.
func TestRunLock(t *testing.T) {
	if got := (&packageType{}).Info().Lock; got != "package" {
		t.Fatalf("Info().Lock = %q, want package", got)
	}
}
