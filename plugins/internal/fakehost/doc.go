// Package fakehost is a test double of sdk.Host that does the real OS work of
// each host call (stat with sha256, atomic write, mkdir, remove, chown, chmod,
// exec in its own process group) natively, so plugin logic can be tested on
// the build machine against real files in t.TempDir() and real processes.
//
// It keeps the host's mode rule: when ReadOnly is set, every mutating call and
// every non-probe exec is refused with abi.CodeDenied, which is how tests
// prove that noop and status never mutate. It records each call by name so
// tests can count host calls. It checks no grants: that is package host's
// job and is tested there.
//
// Test-only: imported from _test.go files under plugins/ and never from a
// plugin's main package, which must build for GOOS=wasip1.
package fakehost
