package main

import (
	"slices"
	"testing"
)

// TestChildEnv: the background compile inherits the run's environment but
// none of the variables that would make it overwrite the run's profiles or
// trace.
func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "CCM_CPUPROFILE=/tmp/c", "CCM_MEMPROFILE=/tmp/m", "CCM_TRACE=/tmp/t", "CCM_TRACEX=keep", "CCM_CACHE_DIR=/c"})
	if want := []string{"PATH=/bin", "CCM_TRACEX=keep", "CCM_CACHE_DIR=/c"}; !slices.Equal(got, want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}
